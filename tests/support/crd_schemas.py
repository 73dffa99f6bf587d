"""Custom objects against their CRD's openAPIV3Schema (jsonschema), strict on unknown fields.

The CRDs are the upstream files kept in gpu_platform/facts/upstream/crds/ (see its README). A structural schema
lets the API server prune unknown fields silently; here every object schema that lists `properties` and
neither allows more (`additionalProperties`) nor keeps unknown fields (`x-kubernetes-preserve-unknown-fields`)
gets `additionalProperties: false`, so a misspelt field fails. CEL rules (`x-kubernetes-validations`) are
not evaluated by jsonschema; `cel_problems` checks the ones the platform's objects could break.
"""
from __future__ import annotations

import copy
import re
from functools import cache
from typing import Any

import jsonschema
import yaml

from gpu_platform.facts import catalog

CRDS = catalog.UPSTREAM / "crds"


def strict(schema: Any) -> Any:
    """A copy of `schema` refusing properties it does not declare (where the schema does not allow them)."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) for k, v in schema.items()}
    if ("properties" in schema and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


@cache
def served_schemas(folder: str) -> dict[tuple[str, str], dict]:
    """(apiVersion, kind) -> the served version's openAPIV3Schema, for every CRD in the folder."""
    out = {}
    for path in sorted((CRDS / folder).glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if version.get("served"):
                out[(f"{group}/{version['name']}", kind)] = version["schema"]["openAPIV3Schema"]
    return out


@cache
def validator(folder: str, api_version: str, kind: str) -> jsonschema.protocols.Validator:
    schema = strict(copy.deepcopy(served_schemas(folder)[(api_version, kind)]))
    return jsonschema.Draft202012Validator(schema)


def schema_of(folder: str, obj: dict) -> dict:
    """The openAPIV3Schema of `obj`'s apiVersion and kind."""
    return served_schemas(folder)[(obj["apiVersion"], obj["kind"])]


def kinds(folder: str) -> set[tuple[str, str]]:
    return set(served_schemas(folder))


def schema_problems(folder: str, obj: dict) -> list[str]:
    """`path: message` for every way `obj` breaks its CRD's schema (empty when it matches)."""
    v = validator(folder, obj["apiVersion"], obj["kind"])
    return [f"{'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
            for e in sorted(v.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))]


# --- the CEL rules of Karpenter's CRDs the platform's objects could break (v1.14.1) ---

ALIAS = re.compile(r"^[a-zA-Z0-9]+@.+$")
ALIAS_FAMILIES = ("al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025")
RESTRICTED_TAGS = ("eks:eks-cluster-name", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim",
                   "karpenter.k8s.aws/ec2nodeclass")
RESTRICTED_LABEL_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws")
ALLOWED_KARPENTER_LABELS = ("karpenter.sh/capacity-type",)


def cel_problems(obj: dict) -> list[str]:
    spec = obj.get("spec") or {}
    return _node_class_cel(spec) if obj["kind"] == "EC2NodeClass" else _node_pool_cel(spec)


def _node_class_cel(spec: dict) -> list[str]:
    problems = []
    if ("role" in spec) == ("instanceProfile" in spec):
        problems.append("must specify exactly one of ['role', 'instanceProfile']")
    terms = spec.get("amiSelectorTerms") or []
    aliases = [t["alias"] for t in terms if "alias" in t]
    for alias in aliases:
        family = alias.split("@")[0]
        if not ALIAS.match(alias) or family not in ALIAS_FAMILIES:
            problems.append(f"alias {alias!r} is not family@version of a known family")
        elif "amiFamily" in spec and spec["amiFamily"].lower() not in (family, "custom"):
            problems.append(f"amiFamily {spec['amiFamily']} does not match alias {alias}")
    if aliases and len(terms) != 1:
        problems.append("an alias term must be the only amiSelectorTerm")
    if not aliases and "amiFamily" not in spec:
        problems.append("must specify amiFamily if amiSelectorTerms does not contain an alias")
    for key in spec.get("tags") or {}:
        if key in RESTRICTED_TAGS or key.startswith("kubernetes.io/cluster") or not key:
            problems.append(f"tag {key!r} is restricted")
    for mapping in spec.get("blockDeviceMappings") or []:
        ebs = mapping.get("ebs") or {}
        if "snapshotID" not in ebs and "volumeSize" not in ebs:
            problems.append("snapshotID or volumeSize must be defined")
    for term in spec.get("capacityReservationSelectorTerms") or []:
        if not {"tags", "id", "instanceMatchCriteria"} & set(term):
            problems.append("a capacityReservationSelectorTerm needs tags, id or instanceMatchCriteria")
        if "id" in term and {"tags", "ownerID", "instanceMatchCriteria"} & set(term):
            problems.append("'id' is mutually exclusive with the other fields of a capacityReservationSelectorTerm")
        for key, value in (term.get("tags") or {}).items():
            if not key or not value:
                problems.append("empty tag keys or values aren't supported")
    return problems


def _node_pool_cel(spec: dict) -> list[str]:
    problems = []
    template = (spec.get("template") or {})
    for key in ((template.get("metadata") or {}).get("labels") or {}):
        domain = key.split("/")[0] if "/" in key else ""
        if domain.endswith(RESTRICTED_LABEL_DOMAINS) and key not in ALLOWED_KARPENTER_LABELS:
            problems.append(f"label {key!r} is in a restricted domain")
        if key == "kubernetes.io/hostname":
            problems.append("label kubernetes.io/hostname is restricted")
    for req in (template.get("spec") or {}).get("requirements") or []:
        if req.get("operator") == "In" and not req.get("values"):
            problems.append(f"requirement {req.get('key')} with operator In has no values")
        domain = req.get("key", "").split("/")[0]
        if domain.endswith("karpenter.sh") and req.get("key") not in ("karpenter.sh/capacity-type", "karpenter.sh/nodepool"):
            problems.append(f"requirement {req.get('key')!r} is in a restricted domain")
    for budget in (spec.get("disruption") or {}).get("budgets") or []:
        if ("schedule" in budget) != ("duration" in budget):
            problems.append("'schedule' must be set with 'duration'")
    return problems
