"""GpuPlatform from Python: receivers that read secrets need `alert_secrets` with every key they name, or
Alertmanager would start without the Secret its receivers read. Refused before any resource registers,
naming the argument and each missing key with the receiver field that reads it."""
from __future__ import annotations

from pathlib import Path

import pytest

from gpu_platform.spec.errors import COMPONENT_ARGUMENTS, SpecError
from tests.support.programs import run

STACK = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.dev.yaml"
PROGRAM = """
    import pathlib

    import pulumi
    import yaml

    from gpu_platform import GpuPlatform, GpuPlatformArgs

    platform = yaml.safe_load(pathlib.Path(STACK).read_text())["config"]["gpu-platform:platform"]
    GpuPlatform("gpus", GpuPlatformArgs(platform=platform, region="us-east-1"SECRETS))
""".replace("STACK", repr(str(STACK)))


@pytest.mark.parametrize("secrets, missing", [
    ("", ["platformSlackWebhook", "researchSlackWebhook"]),
    (', alert_secrets={"platformSlackWebhook": pulumi.Output.secret("https://hooks.example/x")}',
     ["researchSlackWebhook"]),
], ids=["none", "one-of-two"])
def test_receivers_without_their_secrets_are_refused_naming_the_keys(tmp_path, secrets, missing):
    with pytest.raises(SpecError) as err:
        run(tmp_path, PROGRAM.replace("SECRETS", secrets))
    problems = err.value.problems
    assert len(problems) == len(missing)
    for key, problem in zip(missing, problems, strict=True):
        assert problem.startswith(f"GpuPlatform 'gpus': alert_secrets: no value for {key!r}, which "
                                  "monitoring.alerting.receivers[")
    assert err.value.subject == COMPONENT_ARGUMENTS  # the program's argument, not a stack file's key


def test_every_key_given_builds_the_receivers_secret(tmp_path):
    given = ', alert_secrets={k: pulumi.Output.secret("https://hooks.example/x") for k in ' \
            '("platformSlackWebhook", "researchSlackWebhook")}'
    recording = run(tmp_path, PROGRAM.replace("SECRETS", given))
    assert [r for r in recording.resources if r.type == "kubernetes:core/v1:Secret" and "receiver-secrets" in r.name]
