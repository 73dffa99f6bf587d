"""The gpu-platform policy pack. This file only builds the pack; the rules live in gpu_policies/.

`pulumi preview --policy-pack policies` runs this directory as a program: the repository root goes on
sys.path so the rules can read the same catalog, MIG and cost facts the platform is built from.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import PolicyPack  # noqa: E402

from gpu_policies import ENFORCEMENT_LEVEL, PACK_DESCRIPTION, PACK_NAME, POLICIES  # noqa: E402

PolicyPack(name=PACK_NAME, policies=POLICIES, enforcement_level=ENFORCEMENT_LEVEL, description=PACK_DESCRIPTION)
