"""The gpu-platform policy pack. This file only builds the pack; the rules live in gpu_platform.policy.

`pulumi preview --policy-pack policies` runs this directory as a program in its own virtualenv, which
requirements.txt fills with gpu-platform: the rules read the same catalog, MIG and cost facts the
platform is built from. The folder works alone (copied, or published with `pulumi policy publish` once
requirements.txt pins a release); the lock comes from the pack's config (docs/policies.md).
"""
from pulumi_policy import PolicyPack

from gpu_platform.policy import ENFORCEMENT_LEVEL, PACK_DESCRIPTION, PACK_NAME, POLICIES

PolicyPack(name=PACK_NAME, policies=POLICIES, enforcement_level=ENFORCEMENT_LEVEL, description=PACK_DESCRIPTION)
