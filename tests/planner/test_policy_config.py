"""`--policy-config` is checked against each policy's config schema the way the Pulumi CLI checks
`--policy-pack-config` (pulumi/pulumi sdk/go/common/resource/analyzer/config.go): schema defaults with the
file's entries over them, `enforcementLevel` taken out first, keys a schema does not declare allowed, names
no policy has ignored. A PR gate never passes what `pulumi preview` rejects."""
from __future__ import annotations

import json

import pytest

from gpu_platform.planner import verdict
from gpu_platform.planner.cli import main
from gpu_platform.planner.errors import PlannerError
from tests.support.stacks import AS_OF, ROOT


def problems(given: dict, derived: dict | None = None) -> list[str]:
    try:
        verdict.reconcile(verdict.load_pack(), given, derived)
    except PlannerError as exc:
        return exc.problems
    return []


@pytest.mark.parametrize("given, words", [
    ({"monthly-budget": {"monthlyUsd": "lots"}}, "policy config monthly-budget.monthlyUsd: 'lots' is not of type 'number'"),
    ({"monthly-budget": {"enforcementLevel": "advisory", "monthlyUsd": True}},
     "policy config monthly-budget.monthlyUsd: True is not of type 'number'"),
    ({"node-group-protected": {"environments": "prod"}}, "policy config node-group-protected.environments: 'prod'"),
    ({"node-group-protected": {"environments": [3]}}, "policy config node-group-protected.environments.0: 3"),
    ({"node-group-replacement-guard": {"lockFile": ["a"]}}, "policy config node-group-replacement-guard.lockFile"),
])
def test_config_breaking_a_policy_schema_is_refused_naming_the_policy_and_key(given, words):
    found = problems(given)
    assert any(words in p for p in found), found


def test_the_plan_s_own_values_do_not_hide_an_invalid_config_value():
    """The stack file's budget replaces the config's in the verdict; the config's value is checked anyway."""
    found = problems({"monthly-budget": {"monthlyUsd": "lots"}}, {"monthly-budget": {"monthlyUsd": 4000}})
    assert found == ["policy config monthly-budget.monthlyUsd: 'lots' is not of type 'number'"]


@pytest.mark.parametrize("given", [
    {"monthly-budget": {"enforcementLevel": "advisory", "monthlyUsd": 5000}},
    {"monthly-budget": {"aKeyNoSchemaDeclares": {"any": "shape"}}},  # the CLI allows undeclared keys
    {"no-such-policy": {"monthlyUsd": "lots"}},  # a name no policy has is ignored, its properties unchecked
    {"all": "advisory", "node-group-protected": {"environments": ["prod", "staging"]}},
    {},
])
def test_config_the_pulumi_cli_accepts_is_accepted(given):
    assert problems(given) == []


def test_the_cli_exits_2_naming_the_policy_and_key(tmp_path, capsys):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"monthly-budget": {"monthlyUsd": "lots"}}))
    code = main(["plan", "--stack", "dev", "--project-dir", str(ROOT), "--as-of", AS_OF, "--policy-config", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "error: policy config monthly-budget.monthlyUsd: 'lots' is not of type 'number'" in err, err
    assert "Traceback" not in err


def test_check_preview_refuses_the_same_config(tmp_path, capsys):
    path, preview = tmp_path / "policy.json", tmp_path / "preview.json"
    path.write_text(json.dumps({"disruption-approved": {"environments": "prod"}}))
    preview.write_text(json.dumps({"steps": []}))
    code = main(["check-preview", str(preview), "--project-dir", str(ROOT), "--policy-config", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "policy config disruption-approved.environments" in err, err


def test_without_jsonschema_a_given_config_is_refused_not_skipped(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_jsonschema(name: str, *args, **kwargs):
        if name == "jsonschema":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_jsonschema)
    found = problems({"monthly-budget": {"monthlyUsd": "lots"}})
    assert len(found) == 1 and "needs the jsonschema package" in found[0]
    assert problems({}) == []  # no config: nothing to check, jsonschema not needed
