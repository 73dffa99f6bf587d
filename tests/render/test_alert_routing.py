"""Alert delivery: the Alertmanager configuration checked by amtool (`check-config`, `config routes test`),
its inhibition rules, the receiver secrets (Pulumi config secrets, mounted as files) and SNS access."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.render.alert_routing import SECRETS_DIR, alertmanager_config, inhibit_rules, secret_keys
from gpu_platform.render.monitoring import MonitoringSettings
from gpu_platform.spec.errors import SpecError
from tests.support.aws_api import service_model
from tests.support.stacks import resource, resources, stack_platform, write_stack

RELEASE, SECRET = "kubernetes:helm.sh/v3:Release", "kubernetes:core/v1:Secret"
POD_IDENTITY, ROLE_POLICY = "aws:eks/podIdentityAssociation:PodIdentityAssociation", "aws:iam/rolePolicy:RolePolicy"


def existing_mode():
    p = stack_platform("dev")
    p["monitoring"]["prometheus"] = {"mode": "existing"}
    return p


PLATFORMS = {"dev": lambda: stack_platform("dev"), "prod": lambda: stack_platform("prod"), "existing": existing_mode}


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """(plan JSON, --out directory) per platform, planned once per module."""
    from gpu_platform.planner.cli import main

    cache: dict[str, tuple[dict, Path]] = {}

    def run(key: str):
        if key not in cache:
            folder = tmp_path_factory.mktemp(key)
            cfg = write_stack(folder / "Pulumi.test.yaml", PLATFORMS[key]())
            code = main(["plan", "--config", str(cfg), "--json", str(folder / "plan.json"), "--out", str(folder / "out")])
            assert code == 0, f"plan of {key} exited {code}"
            cache[key] = (json.loads((folder / "plan.json").read_text()), folder / "out")
        return cache[key]

    return run


def config_file(planned, key: str) -> Path:
    return planned(key)[1] / "alertmanager" / "alertmanager.yaml"


def stack_values(plan: dict) -> dict:
    return resource(plan, RELEASE, "monitoring-stack")["inputs"]["values"]


def amtool_run(amtool: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([amtool, *args], capture_output=True, text=True, timeout=60)


def route(amtool: str, path: Path, **labels: str) -> str:
    """The receiver `amtool config routes test` resolves for an alert with these labels."""
    result = amtool_run(amtool, "config", "routes", "test", f"--config.file={path}",
                        *(f"{k}={v}" for k, v in labels.items()))
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip()


# --- the rendered configuration ---

@pytest.mark.parametrize("key", ["dev", "prod"])
def test_the_release_carries_the_configuration_the_spec_renders(planned, key):
    spec = parse_platform(PLATFORMS[key]())
    assert stack_values(planned(key)[0])["alertmanager"]["config"] == alertmanager_config(MonitoringSettings.of(spec))
    assert yaml.safe_load(config_file(planned, key).read_text()) == alertmanager_config(MonitoringSettings.of(spec))


@pytest.mark.parametrize("key", ["dev", "prod", "existing"])
def test_amtool_accepts_the_written_configuration(amtool, planned, key):
    result = amtool_run(amtool, "check-config", str(config_file(planned, key)))
    assert result.returncode == 0 and "SUCCESS" in result.stdout, result.stdout + result.stderr


def test_amtool_rejects_a_route_to_an_unknown_receiver(amtool, tmp_path):
    """The check itself: amtool fails a configuration that routes to no receiver."""
    config = alertmanager_config(MonitoringSettings.of(parse_platform(stack_platform("dev"))))
    config["route"]["routes"][0]["receiver"] = "nobody"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(config))
    assert amtool_run(amtool, "check-config", str(tmp_path / "bad.yaml")).returncode != 0


def test_existing_mode_writes_the_file_for_your_own_alertmanager_and_installs_nothing(planned):
    plan, out = planned("existing")
    assert not resources(plan, SECRET)
    assert not [r for r in resources(plan, RELEASE) if r["inputs"]["chart"] == "kube-prometheus-stack"]
    assert "mode is existing" in (out / "alertmanager" / "alertmanager.yaml").read_text().splitlines()[0]


# --- routing, proved by amtool ---

# (stack, alert labels, receivers as amtool lists them): team X's critical reaches X, warnings and
# namespace-less alerts the platform; a hardware alert a team route takes reaches the platform first too.
ROUTES = [
    ("dev", {"alertname": "GpuXidError", "severity": "critical", "namespace": "research"},
     "platform-chat,research-chat"),
    ("dev", {"alertname": "GpuMemoryNearLimit", "severity": "critical", "namespace": "research"}, "research-chat"),
    ("dev", {"alertname": "GpuTemperatureHigh", "severity": "warning", "namespace": "research"}, "platform-chat"),
    ("dev", {"alertname": "GpuNotDetected", "severity": "critical", "node": "ip-10-0-1-5"}, "platform-chat"),
    ("dev", {"alertname": "DcgmExporterDown", "severity": "critical"}, "platform-chat"),
    ("dev", {"alertname": "GpuXidError", "severity": "critical", "namespace": "applied-ml"}, "platform-chat"),
    ("prod", {"alertname": "GpuXidError", "severity": "critical", "namespace": "research"},
     "platform-pager,research-chat"),
    ("prod", {"alertname": "GpuEccUncorrectable", "severity": "critical", "namespace": "inference"},
     "platform-pager,inference-oncall"),
    ("prod", {"alertname": "GpuRowRemapFailure", "severity": "critical", "namespace": "research"},
     "platform-pager,research-chat"),
    ("prod", {"alertname": "GpuNvlinkErrors", "severity": "warning", "namespace": "research"}, "platform-chat"),
    ("prod", {"alertname": "GpuTemperatureHigh", "severity": "warning", "namespace": "research"}, "platform-chat"),
    ("prod", {"alertname": "GpuCudaOom", "severity": "high", "namespace": "inference"}, "inference-oncall"),
    ("prod", {"alertname": "GpuMemoryNearLimit", "severity": "critical", "namespace": "inference"}, "inference-oncall"),
    ("prod", {"alertname": "GpuCudaOom", "severity": "high", "namespace": "research"}, "platform-chat"),
    ("prod", {"alertname": "GpuNotDetected", "severity": "critical", "node": "ip-10-0-1-5"}, "platform-pager"),
    ("prod", {"alertname": "GpuNotDetected", "severity": "critical", "node": "ip-10-0-1-6", "cause": "no-dra-gpu"},
     "platform-pager"),
    ("dev", {"alertname": "GpuNotDetected", "severity": "critical", "node": "ip-10-0-1-6", "cause": "no-dra-gpu"},
     "platform-chat"),
    ("prod", {"alertname": "KubeNodeNotReady", "severity": "warning"}, "platform-chat"),
    ("prod", {"alertname": "GpuIdle", "severity": "info", "namespace": "batch"}, "gpu-cost-feed"),
    ("prod", {"alertname": "GpuXidError", "severity": "critical", "namespace": "batch"}, "platform-pager"),
    # a GPU pod left pending reaches its team (where it takes `high`) and the platform; the autoscalers'
    # failures name no namespace: the platform's
    ("prod", {"alertname": "GpuPodPending", "severity": "high", "namespace": "inference"},
     "platform-chat,inference-oncall"),
    ("prod", {"alertname": "GpuPodPending", "severity": "high", "namespace": "research"}, "platform-chat"),
    ("prod", {"alertname": "GpuScaleUpFailed", "severity": "warning", "reason": "cloudProviderError"}, "platform-chat"),
    ("prod", {"alertname": "GpuNodeLaunchFailed", "severity": "warning", "error": "InsufficientCapacityError"},
     "platform-chat"),
    # a node that failed its acceptance checks names no namespace: the platform's, paged like a GPU fault;
    # throttling and the power brake are the hardware's, so they reach the platform even from a team's pod
    ("prod", {"alertname": "GpuNodeAcceptanceFailed", "severity": "critical", "node": "ip-10-0-1-7"}, "platform-pager"),
    ("dev", {"alertname": "GpuNodeAcceptanceFailed", "severity": "critical", "node": "ip-10-0-1-7"}, "platform-chat"),
    ("prod", {"alertname": "GpuNodePassiveHealthFailed", "severity": "critical", "node": "ip-10-0-1-7"},
     "platform-pager"),
    ("dev", {"alertname": "GpuNodePassiveHealthFailed", "severity": "critical", "node": "ip-10-0-1-7"},
     "platform-chat"),
    ("prod", {"alertname": "GpuNodeAcceptanceStuck", "severity": "critical", "node": "ip-10-0-1-9", "pool": "a100-train"},
     "platform-pager"),
    ("prod", {"alertname": "GpuClockThrottled", "severity": "warning", "namespace": "research"}, "platform-chat"),
    ("prod", {"alertname": "GpuPowerBrake", "severity": "warning", "namespace": "inference"}, "platform-chat"),
    ("prod", {"alertname": "Watchdog", "severity": "none"}, "null"),
    ("dev", {"alertname": "InfoInhibitor", "severity": "none"}, "null"),
]


@pytest.mark.parametrize("key, labels, receiver", ROUTES,
                         ids=[f"{k}-{lab['alertname']}-{lab.get('namespace', lab.get('cause', '-'))}"
                              for k, lab, _ in ROUTES])
def test_amtool_routes_each_alert_to_its_receiver(amtool, planned, key, labels, receiver):
    assert route(amtool, config_file(planned, key), **labels) == receiver


def test_amtool_verifies_an_xid_alert_in_a_team_namespace_reaching_the_team_and_the_platform(amtool, planned):
    for key, receivers in (("dev", "platform-chat,research-chat"), ("prod", "platform-pager,research-chat")):
        result = amtool_run(amtool, "config", "routes", "test", f"--config.file={config_file(planned, key)}",
                            f"--verify.receivers={receivers}", "alertname=GpuXidError", "severity=critical",
                            "namespace=research", "node=ip-10-0-1-5", "UUID=GPU-a")
        assert result.returncode == 0, result.stdout + result.stderr


def test_hardware_copies_continue_and_only_where_the_team_receiver_differs():
    spec = parse_platform(stack_platform("prod"))
    routes = alertmanager_config(MonitoringSettings.of(spec))["route"]["routes"]
    copies = [r for r in routes if r.get("continue")]
    assert copies and all(any(m.startswith("alertname=~") and "GpuXidError" in m for m in r["matchers"])
                          for r in copies)
    # inference takes critical and high; its high receiver differs from the platform's (default) one
    inference = [r for r in copies if 'namespace="inference"' in r["matchers"]]
    assert {(r["receiver"], r["matchers"][-1]) for r in inference} == {
        ("platform-pager", 'severity="critical"'), ("platform-chat", 'severity="high"')}
    platform = stack_platform("dev")
    platform["teams"][0]["alerting"] = {"critical": "platform-chat"}  # the platform's default receiver
    dev_routes = alertmanager_config(MonitoringSettings.of(parse_platform(platform)))["route"]["routes"]
    assert not [r for r in dev_routes if r.get("continue")]  # the team's receiver is the platform's already


def test_amtool_verify_fails_on_a_wrong_expectation(amtool, planned):
    """The check itself: `--verify.receivers` exits non-zero when the route differs."""
    result = amtool_run(amtool, "config", "routes", "test", f"--config.file={config_file(planned, 'dev')}",
                        "--verify.receivers=research-chat", "severity=warning", "namespace=research")
    assert result.returncode != 0


def test_critical_routes_repeat_at_the_critical_interval():
    spec = parse_platform(stack_platform("prod"))
    tree = alertmanager_config(MonitoringSettings.of(spec))["route"]
    assert tree["repeat_interval"] == "4h" and tree["group_wait"] == "30s" and tree["group_interval"] == "5m"
    for r in tree["routes"]:
        assert ("repeat_interval" in r) == ('severity="critical"' in r["matchers"]), r
        if "repeat_interval" in r:
            assert r["repeat_interval"] == "1h"


# --- inhibition: warnings give way to criticals on the same GPU ---

def matches(matcher: str, labels: dict[str, str]) -> bool:
    """Alertmanager's matcher semantics for the `name="v"` and `name=~"re"` forms the platform writes."""
    name, op, value = re.fullmatch(r'(\w+)(=~|=)"(.*)"', matcher).groups()
    have = labels.get(name, "")
    return bool(re.fullmatch(value, have)) if op == "=~" else have == value


def inhibited(target: dict[str, str], source: dict[str, str]) -> bool:
    for rule in inhibit_rules():
        if (all(matches(m, source) for m in rule.get("source_matchers", []))
                and all(matches(m, target) for m in rule["target_matchers"])
                and all(source.get(label, "") == target.get(label, "") for label in rule.get("equal", []))
                and "source_matchers" in rule):
            return True
    return False


def gpu_alert(name: str, severity: str, node: str, uuid: str, **extra: str) -> dict:
    return {"alertname": name, "severity": severity, "node": node, "UUID": uuid, **extra}


def test_a_critical_on_a_gpu_inhibits_that_gpus_warnings():
    hot = gpu_alert("GpuTemperatureHigh", "critical", "n1", "GPU-a")
    assert inhibited(gpu_alert("GpuTemperatureHigh", "warning", "n1", "GPU-a"), hot)
    assert inhibited(gpu_alert("GpuIdle", "info", "n1", "GPU-a"), gpu_alert("GpuXidError", "critical", "n1", "GPU-a"))


def test_a_critical_on_one_gpu_leaves_other_gpus_warnings_alone():
    hot = gpu_alert("GpuTemperatureHigh", "critical", "n1", "GPU-a")
    assert not inhibited(gpu_alert("GpuTemperatureHigh", "warning", "n1", "GPU-b"), hot)
    assert not inhibited(gpu_alert("GpuTemperatureHigh", "warning", "n2", "GPU-c"), hot)


def test_a_node_level_gpu_fault_inhibits_the_nodes_gpu_warnings_only():
    fault = {"alertname": "GpuNotDetected", "severity": "critical", "node": "n1", "cause": "no-allocatable-gpu"}
    assert inhibited(gpu_alert("GpuIdle", "info", "n1", "GPU-a"), fault)
    assert not inhibited(gpu_alert("GpuIdle", "info", "n2", "GPU-b"), fault)
    assert not inhibited({"alertname": "KubePodCrashLooping", "severity": "warning", "node": "n1"}, fault)


def test_other_alerts_keep_the_charts_inhibition_by_name_and_namespace():
    crit = {"alertname": "KubePodCrashLooping", "severity": "critical", "namespace": "research"}
    assert inhibited({"alertname": "KubePodCrashLooping", "severity": "warning", "namespace": "research"}, crit)
    assert not inhibited({"alertname": "KubePodCrashLooping", "severity": "warning", "namespace": "batch"}, crit)


def test_criticals_are_never_inhibited_by_gpu_rules():
    assert not inhibited(gpu_alert("GpuXidError", "critical", "n1", "GPU-a"),
                         gpu_alert("GpuTemperatureHigh", "critical", "n1", "GPU-a"))


# --- receiver secrets: Pulumi config secrets, mounted as files ---

@pytest.mark.parametrize("key", ["dev", "prod"])
def test_every_secret_file_the_configuration_reads_is_a_key_of_the_mounted_secret(planned, key):
    plan, out = planned(key)
    values = stack_values(plan)["alertmanager"]
    assert values["alertmanagerSpec"]["secrets"] == [names.ALERT_RECEIVERS_SECRET]
    manifest = yaml.safe_load((out / "manifests" / "monitoring" / f"Secret-{names.ALERT_RECEIVERS_SECRET}.yaml")
                              .read_text())
    text = yaml.safe_dump(values["config"])
    files = set(re.findall(rf"{SECRETS_DIR}/{names.ALERT_RECEIVERS_SECRET}/([\w-]+)", text))
    spec = parse_platform(PLATFORMS[key]())
    assert files == set(manifest["stringData"]) == {k for _, k in secret_keys(spec.monitoring.alerting)}


@pytest.mark.parametrize("key", ["dev", "prod"])
def test_secret_values_stay_secret_in_the_plan(planned, key):
    plan, out = planned(key)
    [secret] = resources(plan, SECRET)
    assert secret["inputs"]["stringData"] == "[secret]"
    everything = json.dumps(plan) + "".join(p.read_text() for p in out.rglob("*.yaml"))
    assert "stand-in" not in everything and "hooks.slack.com" not in everything


def test_the_release_waits_for_the_secret_and_the_sns_access(planned):
    plan, _ = planned("prod")
    release = resource(plan, RELEASE, "monitoring-stack")
    [secret] = resources(plan, SECRET)
    [association] = [r for r in resources(plan, POD_IDENTITY) if r["name"] == "alert-publishing"]
    assert {secret["urn"], association["urn"]} <= set(release["options"]["dependsOn"])


def test_sns_receivers_publish_through_pod_identity_to_exactly_their_topics(planned):
    plan, _ = planned("prod")
    [association] = [r for r in resources(plan, POD_IDENTITY) if r["name"] == "alert-publishing"]
    values = stack_values(plan)["alertmanager"]
    assert association["inputs"]["serviceAccount"] == values["serviceAccount"]["name"]
    assert association["inputs"]["namespace"] == parse_platform(stack_platform("prod")).monitoring.prometheus.namespace
    [policy] = [r for r in resources(plan, ROLE_POLICY) if r["name"] == "alert-publishing"]
    assert json.loads(policy["inputs"]["policy"])["Statement"] == [{
        "Effect": "Allow", "Action": "sns:Publish", "Resource": ["arn:aws:sns:us-east-1:123456789012:inference-oncall"]}]


def test_without_sns_receivers_there_is_no_aws_access(planned):
    plan, _ = planned("dev")
    assert not [r for r in resources(plan, POD_IDENTITY) if r["name"] == "alert-publishing"]


# --- plaintext secrets and missing keys: exit 2 naming the field ---

def run_plan(tmp_path, platform, capsys, **config) -> tuple[int, str]:
    from gpu_platform.planner.cli import main

    cfg = write_stack(tmp_path / "Pulumi.test.yaml", platform)
    if config:
        data = yaml.safe_load(cfg.read_text())
        data["config"].update(config)
        cfg.write_text(yaml.safe_dump(data))
    code = main(["plan", "--config", str(cfg)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def receiver(platform: dict, name: str) -> dict:
    return next(r for r in platform["monitoring"]["alerting"]["receivers"] if r["name"] == name)


@pytest.mark.parametrize("kind, field, value", [
    ("slack", "webhookUrl", "https://hooks.slack.com/services/T000/B000/XXXX"),
    ("pagerduty", "routingKey", "e93facc04764012d7bfb002500d5d1a6"),
])
def test_a_plaintext_webhook_url_or_routing_key_exits_2_naming_the_field(tmp_path, capsys, kind, field, value):
    p = stack_platform("prod")
    target = next(r for r in p["monitoring"]["alerting"]["receivers"] if kind in r)
    target[kind] = {field: value}
    index = p["monitoring"]["alerting"]["receivers"].index(target)
    code, err = run_plan(tmp_path, p, capsys)
    assert code == 2
    assert f"monitoring.alerting.receivers[{index}].{kind}.{field}: a plaintext" in err and value not in err


def test_a_secret_pasted_where_the_key_name_goes_is_refused(tmp_path, capsys):
    p = stack_platform("dev")
    receiver(p, "platform-chat")["slack"]["webhookUrlSecret"] = "https://hooks.slack.com/services/T0/B0/X"
    code, err = run_plan(tmp_path, p, capsys)
    assert code == 2 and "monitoring.alerting.receivers[0].slack.webhookUrlSecret" in err and "the secret itself" in err


def test_a_receiver_key_stored_in_plaintext_exits_2_naming_the_field(tmp_path, capsys):
    code, err = run_plan(tmp_path, stack_platform("dev"), capsys,
                         **{"gpu-platform:platformSlackWebhook": "https://hooks.slack.com/services/T0/B0/X"})
    assert code == 2
    assert ("monitoring.alerting.receivers[0].slack.webhookUrlSecret: config key `gpu-platform:platformSlackWebhook` "
            "is stored in plaintext") in err
    assert "hooks.slack.com" not in err


def test_a_missing_receiver_key_exits_2_naming_the_field(tmp_path, capsys):
    p = stack_platform("dev")
    receiver(p, "research-chat")["slack"]["webhookUrlSecret"] = "researchWebhookTypo"
    code, err = run_plan(tmp_path, p, capsys)
    assert code == 2 and "receivers[1].slack.webhookUrlSecret: config key `gpu-platform:researchWebhookTypo` is not set" in err


@pytest.mark.parametrize("url, words", [
    ("https://events.example.com/hook?token=abc", "carries a credential"),
    ("https://user:pw@events.example.com/hook", "carries a credential"),
    ("https://hooks.slack.com/services/T0/B0/X", "slack receiver"),
    ("ftp://events.example.com", "http(s) URL"),
])
def test_a_webhook_url_carrying_a_credential_is_refused(url, words):
    p = stack_platform("prod")
    receiver(p, "gpu-cost-feed")["webhook"]["url"] = url
    with pytest.raises(SpecError) as err:
        parse_platform(p)
    [found] = [x for x in err.value.problems if x.startswith("monitoring.alerting.receivers[2].webhook.url:")]
    assert words in found


# --- the rest of the spec rules ---

def problems_of(edit) -> list[str]:
    p = stack_platform("prod")
    edit(p)
    with pytest.raises(SpecError) as err:
        parse_platform(p)
    return err.value.problems


@pytest.mark.parametrize("edit, path, words", [
    (lambda p: p["monitoring"]["alerting"]["platform"].update(critical="pager"),
     "monitoring.alerting.platform.critical", "no receiver 'pager'"),
    (lambda p: p["teams"][0]["alerting"].update(warning="nobody"), "teams[0].alerting.warning", "no receiver"),
    (lambda p: p["monitoring"]["alerting"]["platform"].pop("default"), "monitoring.alerting.platform.default",
     "required"),
    (lambda p: p["monitoring"]["alerting"]["receivers"][1].update(name="platform-pager"),
     "monitoring.alerting.receivers[1].name", "duplicate"),
    (lambda p: p["monitoring"]["alerting"]["receivers"][1].update(name="null"),
     "monitoring.alerting.receivers[1].name", "reserved"),
    (lambda p: p["monitoring"]["alerting"]["receivers"][1].update(name="Pager_1"),
     "monitoring.alerting.receivers[1].name", "is not a DNS-1123 label"),
    (lambda p: p["monitoring"]["alerting"]["receivers"][0].update(sns={"topicArn": "arn:aws:sns:us-east-1:123456789012:t"}),
     "monitoring.alerting.receivers[0]", "exactly one"),
    (lambda p: p["monitoring"]["alerting"].update(repeatInterval="1m"), "monitoring.alerting.repeatInterval",
     "groupInterval"),
    (lambda p: p["monitoring"]["alerting"].update(groupWait="soon"), "monitoring.alerting.groupWait", "duration"),
    (lambda p: p["monitoring"]["alerting"].update(groupBy=["alert-name"]), "monitoring.alerting.groupBy[0]", "label"),
    (lambda p: p["monitoring"].pop("alerting"), "monitoring.alerting", "prod alerts must reach someone"),
    (lambda p: p["monitoring"]["alerting"]["receivers"][4]["sns"].update(topicArn="inference-oncall"),
     "monitoring.alerting.receivers[4].sns.topicArn", "pattern"),
])
def test_invalid_alerting_is_refused_with_its_field(edit, path, words):
    found = [x for x in problems_of(edit) if x.startswith(path + ":")]
    assert found and words in found[0], problems_of(edit)


def test_team_routes_need_the_receivers_of_monitoring_alerting():
    p = stack_platform("dev")
    del p["monitoring"]["alerting"]
    with pytest.raises(SpecError) as err:
        parse_platform(p)
    assert [x for x in err.value.problems if x.startswith("teams[0].alerting:")]


def test_dev_may_leave_alerting_out():
    p = stack_platform("dev")
    del p["monitoring"]["alerting"]
    del p["teams"][0]["alerting"]
    assert parse_platform(p).monitoring.alerting is None


def test_the_pod_identity_association_meets_the_eks_api_model(planned):
    from botocore.validate import ParamValidator

    plan, _ = planned("prod")
    [association] = [r for r in resources(plan, POD_IDENTITY) if r["name"] == "alert-publishing"]
    shape = service_model("eks").operation_model(
        "CreatePodIdentityAssociation").input_shape
    params = association["inputs"]
    assert set(params) <= set(shape.members)
    report = ParamValidator().validate(params, shape)
    assert not report.has_errors(), report.generate_report()
