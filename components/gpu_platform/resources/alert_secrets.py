"""Alert receivers' secrets, read from the stack's Pulumi config as secret Outputs.

The one place the program reads config besides the platform object (called from __main__.py, never
from a component). Each receiver names a config key; the value must have been stored with
`pulumi config set --secret`, so it stays encrypted in the stack file and secret in the state: a key
stored in plaintext, or missing, is refused with the receiver field that names it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import pulumi

from gpu_platform.render.alert_routing import delivered_alerting, secret_keys
from gpu_platform.spec.errors import SpecError

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

PLATFORM_KEY = "platform"


def token_keys(spec: "PlatformSpec") -> list[tuple[str, str]]:
    """(field path, config key) of every service's Hugging Face token, each key once."""
    out: dict[str, str] = {}
    for i, team in enumerate(spec.teams):
        for j, service in enumerate(team.services):
            hf = service.model.hugging_face
            if hf is not None and hf.token_secret and hf.token_secret not in out:
                out[hf.token_secret] = f"teams[{i}].services[{j}].model.huggingFace.tokenSecret"
    return [(field, key) for key, field in out.items()]


def receiver_secrets(spec: "PlatformSpec", config: Optional[pulumi.Config] = None) -> dict[str, pulumi.Output[str]]:
    """{config key: secret Output} for every receiver secret; SpecError listing every problem."""
    from pulumi.runtime.config import get_config, is_config_secret

    config = config or pulumi.Config()
    problems, found = [], {}
    if is_config_secret(config.full_key(PLATFORM_KEY)):
        problems.append(f"{config.full_key(PLATFORM_KEY)}: holds a secret (`pulumi config set --secret --path ...`), "
                        "which makes the whole platform description secret; keep each secret in its own config key "
                        "and name the key in the receiver")
    for field, key in [*secret_keys(delivered_alerting(spec.monitoring)), *token_keys(spec)]:
        full = config.full_key(key)
        if get_config(full) is None:
            problems.append(f"{field}: config key `{full}` is not set; run `pulumi config set --secret {key} <value>`")
        elif not is_config_secret(full):
            problems.append(f"{field}: config key `{full}` is stored in plaintext in the stack file; a plaintext "
                            f"secret is refused: run `pulumi config set --secret {key} <value>`")
        else:
            found[key] = config.require_secret(key)
    if problems:
        raise SpecError(problems)
    return found
