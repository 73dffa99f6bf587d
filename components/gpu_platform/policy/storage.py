"""The model cache: a shared EFS file system holding weights that took hours to download.

- Encrypted at rest (changing `encrypted` later replaces the file system, so it must be right at birth).
- Protected, so no update can delete or replace it. The program also sets `retainOnDelete`, which keeps
  the cloud file system even if Pulumi deletes it, but policies never see that option: unit tests of
  resources/model_cache.py assert it instead.
- Advisory: elastic throughput (bursting mode starves large model loads once credits run out).
"""
from __future__ import annotations

from typing import Any
from collections.abc import Iterator, Mapping

from pulumi_policy import EnforcementLevel, ResourceValidationArgs, Severity

from gpu_platform.policy.common import FILE_SYSTEM, get, resource_policy, truthy

ELASTIC = "elastic"


def encrypted_and_protected(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    if not truthy(get(args.props, "encrypted")):
        yield (f"EFS file system {args.name!r} is not encrypted at rest: set encrypted=True (changing it later "
               "replaces the file system and loses the cache)")
    if not args.opts.protect:
        yield (f"EFS file system {args.name!r} is not protected: an update could delete the model cache; create it "
               "with protect=True (and retain_on_delete=True)")


def elastic_throughput(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    mode = get(args.props, "throughputMode", "bursting")
    if mode != ELASTIC:
        yield (f"EFS file system {args.name!r} uses {mode} throughput: loading large models drains burst credits "
               "and stalls; use throughputMode elastic")


POLICIES = [
    resource_policy("model-cache-encrypted-protected", "The model cache file system is encrypted and protected.",
                    [FILE_SYSTEM], encrypted_and_protected, severity=Severity.HIGH),
    resource_policy("model-cache-elastic-throughput", "The model cache file system uses elastic throughput.",
                    [FILE_SYSTEM], elastic_throughput, severity=Severity.LOW, level=EnforcementLevel.ADVISORY),
]
