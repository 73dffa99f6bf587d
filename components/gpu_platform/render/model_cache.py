"""The model cache's StorageClass: EFS access points (`efs-ap`), one directory per claim under
`/models/<namespace>/<claim>` (the file system and its add-on are in resources/model_cache.py)."""
from __future__ import annotations

from typing import Any

from gpu_platform.facts import catalog, names

BASE_PATH = "/models"
# No UUID suffix (ensureUniqueDirectory "false"): a claim deleted and re-created under the same name
# finds its cache again. Claim names are unique per namespace, so live claims never share a directory.
STORAGE_CLASS_PARAMETERS = {
    "provisioningMode": "efs-ap",
    "directoryPerms": "700",  # access points enforce one POSIX identity per claim: owner-only is enough
    "basePath": BASE_PATH,
    "subPathPattern": "${.PVC.namespace}/${.PVC.name}",
    "ensureUniqueDirectory": "false",
}


def storage_class(file_system_id: Any) -> dict[str, Any]:
    """The StorageClass manifest; `file_system_id` may be an Output when registered."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": names.MODEL_CACHE_STORAGE_CLASS,
                         "labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY}},
            "provisioner": catalog.EFS_CSI_PROVISIONER,
            "parameters": {**STORAGE_CLASS_PARAMETERS, "fileSystemId": file_system_id},
            "reclaimPolicy": "Retain", "volumeBindingMode": "Immediate"}
