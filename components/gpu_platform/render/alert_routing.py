"""The Alertmanager configuration, decided from `monitoring.alerting` (pure; no secrets in it).

Routing, first match wins:
  1. the stack's heartbeat alerts (Watchdog, InfoInhibitor) go nowhere;
  2. per team, per severity it lists: alerts whose `namespace` is the team's go to the team's receiver
     (a team's `default` takes its remaining severities). A hardware alert (an XID, ECC or NVLink error,
     a failed row remap) or a GPU pod left pending that a team route takes reaches the platform's receiver
     for its severity first, through a route with `continue`: the team learns its job was hit or waits, the
     platform repairs the GPU or finds capacity (the autoscalers' own failures carry no namespace: platform);
  3. per severity the platform lists; everything else to the platform's `default` (the root).
Critical routes repeat at `criticalRepeatInterval`, the rest at `repeatInterval`.

Secrets never enter the configuration: each receiver reads its webhook URL, routing key or token from
a file (`api_url_file`, `routing_key_file`, `credentials_file`) in the Secret the platform creates
from Pulumi config secrets, which the Prometheus operator mounts under /etc/alertmanager/secrets/.
So the configuration can sit in Helm values, the plan and `--out` files, and be checked with amtool.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

from gpu_platform.facts import names
from gpu_platform.render.alerts import HARDWARE_ALERTS
from gpu_platform.render.capacity_alerts import CAPACITY_ALERTS
from gpu_platform.spec.alerting import NULL_RECEIVER, SEVERITIES, AlertingSpec, ReceiverSpec, SeverityRoutesSpec

if TYPE_CHECKING:
    from gpu_platform.render.monitoring import MonitoringSettings
    from gpu_platform.spec.models import MonitoringSpec

SECRETS_DIR = "/etc/alertmanager/secrets"  # where the operator mounts alertmanagerSpec.secrets
TEMPLATES = ["/etc/alertmanager/config/*.tmpl"]  # the chart's default: templateFiles land there
HEARTBEATS = ("Watchdog", "InfoInhibitor")  # kube-prometheus-stack's always-firing helper alerts
GPU_ALERTS = "Gpu.+|DcgmExporterDown"  # the platform's own alert names
# Node-level GPU faults: while one fires, the node's GPU warnings add nothing.
NODE_GPU_FAULTS = "GpuNotDetected|GpuDevicesUnhealthy|GpuNodeHardwareUnhealthy"
# PagerDuty Events v2 knows critical, error, warning, info; the platform's `high` is `error` there.
PAGERDUTY_SEVERITY = ('{{ if eq .CommonLabels.severity "high" }}error'
                      '{{ else if .CommonLabels.severity }}{{ .CommonLabels.severity }}{{ else }}critical{{ end }}')
SLACK_TEXT = ("{{ range .Alerts }}*{{ .Labels.severity }}* {{ .Annotations.summary }}\n{{ end }}"
              "{{ with index .Alerts 0 }}{{ .Annotations.description }}{{ end }}")


def secret_file(config_key: str) -> str:
    return f"{SECRETS_DIR}/{names.ALERT_RECEIVERS_SECRET}/{config_key}"


def delivered_alerting(mon: "MonitoringSpec") -> Optional[AlertingSpec]:
    """`monitoring.alerting` when the platform configures the Alertmanager (mode install), else None: with
    `existing` or `none` the configuration is only written by `gpu-platform plan --out` for your own."""
    return mon.alerting if mon.enabled and mon.prometheus.mode == "install" else None


def secret_keys(alerting: Optional[AlertingSpec]) -> list[tuple[str, str]]:
    """(field path, config key) of every receiver secret, in receiver order, each key once."""
    out, seen = [], set()
    for i, r in enumerate(alerting.receivers if alerting else ()):
        for field, key in r.secret_keys():
            if key not in seen:
                seen.add(key)
                out.append((f"monitoring.alerting.receivers[{i}].{field}", key))
    return out


def missing_secrets(alerting: Optional[AlertingSpec], given: Any) -> list[str]:
    """Problems with a library caller's `alert_secrets` (config key -> secret value): every key a receiver
    reads must be there, or Alertmanager would start without the file the receiver names."""
    needed = secret_keys(alerting)
    if not needed:
        return []
    if not isinstance(given, Mapping):
        keys = ", ".join(repr(k) for _, k in needed)
        return [f"alert_secrets: must map each receiver's config key ({keys}) to its secret value, not "
                f"{type(given).__name__}"]
    return [f"alert_secrets: no value for {key!r}, which {field} reads: pass alert_secrets={{{key!r}: <secret>, ...}} "
            f"(gpu_platform.resources.alert_secrets.receiver_secrets(spec) reads them from the stack's secret config)"
            for field, key in needed if key not in given]


def sns_topics(alerting: Optional[AlertingSpec]) -> list[str]:
    return sorted({r.sns.topic_arn for r in (alerting.receivers if alerting else ()) if r.sns})


def alertmanager_config(settings: "MonitoringSettings") -> dict[str, Any]:
    """alertmanager.yaml for the stack's `monitoring.alerting` (which must be set)."""
    alerting = _alerting(settings)
    return {
        "global": {"resolve_timeout": "5m"},
        "route": route_tree(settings),
        "inhibit_rules": inhibit_rules(),
        "receivers": [{"name": NULL_RECEIVER}, *(receiver(r, settings.cluster_name) for r in alerting.receivers)],
        "templates": list(TEMPLATES),
    }


def _alerting(settings: "MonitoringSettings") -> AlertingSpec:
    if settings.monitoring.alerting is None:
        raise ValueError("monitoring.alerting is not set: there is no Alertmanager configuration to write")
    return settings.monitoring.alerting


def _platform_default(alerting: AlertingSpec) -> str:
    """The receiver of everything no other route takes (the stack file's rules require it)."""
    if alerting.platform.default is None:
        raise ValueError("monitoring.alerting.platform.default: required")
    return alerting.platform.default


def route_tree(settings: "MonitoringSettings") -> dict[str, Any]:
    alerting = _alerting(settings)
    routes: list[dict[str, Any]] = [{"receiver": NULL_RECEIVER, "matchers": [f'alertname="{name}"']}
                                    for name in HEARTBEATS]
    for team, team_routes in settings.team_routes.items():
        namespace = f'namespace="{names.team_namespace(team)}"'
        routes += _hardware_copies(alerting, team_routes, namespace)
        routes += _severity_routes(alerting, team_routes.routes(), [namespace])
        if team_routes.default:
            routes.append({"receiver": team_routes.default, "matchers": [namespace]})
    routes += _severity_routes(alerting, alerting.platform.routes(), [])
    return {
        "receiver": _platform_default(alerting),
        "group_by": list(alerting.group_by),
        "group_wait": alerting.group_wait,
        "group_interval": alerting.group_interval,
        "repeat_interval": alerting.repeat_interval,
        "routes": routes,
    }


def _severity_routes(alerting: AlertingSpec, table: dict[str, str], matchers: list[str],
                     also: bool = False) -> list[dict[str, Any]]:
    """One route per severity `table` lists; `also`: the alert goes on to the routes after this one."""
    out = []
    for severity in SEVERITIES:
        if severity in table:
            route: dict[str, Any] = {"receiver": table[severity], "matchers": [*matchers, f'severity="{severity}"']}
            if also:
                route["continue"] = True
            if severity == "critical":
                route["repeat_interval"] = alerting.critical_repeat_interval
            out.append(route)
    return out


def _hardware_copies(alerting: AlertingSpec, team_routes: SeverityRoutesSpec, namespace: str) -> list[dict[str, Any]]:
    """For each severity the team takes, hardware and capacity alerts in its namespace also go to the platform's
    receiver for that severity (none where that is the team's receiver already: one notification is enough)."""
    taken, platform = team_routes.routes(), alerting.platform.routes()
    copies: dict[str, str] = {}
    for severity in SEVERITIES:
        team_receiver = taken.get(severity, team_routes.default)
        platform_receiver = platform.get(severity, _platform_default(alerting))
        if team_receiver is not None and team_receiver != platform_receiver:
            copies[severity] = platform_receiver
    shared = f'alertname=~"{"|".join(HARDWARE_ALERTS + CAPACITY_ALERTS)}"'
    return _severity_routes(alerting, copies, [namespace, shared], also=True)


def inhibit_rules() -> list[dict[str, Any]]:
    """The chart's defaults for alerts that are not about one GPU, then the GPU-aware ones.

    The chart inhibits warnings by a critical of the same alert name and namespace; for GPU alerts that
    would silence a warm GPU because another GPU of the same (or no) namespace is hot, so GPU alerts are
    inhibited per GPU (`UUID`) and per node for node-level GPU faults instead.
    """
    not_gpu = 'UUID=""'
    return [
        {"source_matchers": ['severity="critical"'], "target_matchers": ['severity=~"warning|info"', not_gpu],
         "equal": ["namespace", "alertname"]},
        {"source_matchers": ['severity="warning"'], "target_matchers": ['severity="info"', not_gpu],
         "equal": ["namespace", "alertname"]},
        {"source_matchers": ['alertname="InfoInhibitor"'], "target_matchers": ['severity="info"'], "equal": ["namespace"]},
        {"target_matchers": ['alertname="InfoInhibitor"']},
        {"source_matchers": ['severity="critical"', 'UUID=~".+"'],
         "target_matchers": ['severity=~"warning|info"', 'UUID=~".+"'], "equal": ["UUID"]},
        {"source_matchers": [f'alertname=~"{NODE_GPU_FAULTS}"', 'severity="critical"'],
         "target_matchers": ['severity=~"warning|info"', f'alertname=~"{GPU_ALERTS}"', 'node=~".+"'],
         "equal": ["node"]},
    ]


def receiver(r: ReceiverSpec, cluster: str) -> dict[str, Any]:
    if r.slack:
        config: dict[str, Any] = {"api_url_file": secret_file(r.slack.webhook_url_secret), "send_resolved": True,
                  "title": _title(cluster), "text": SLACK_TEXT}
        if r.slack.channel:
            config["channel"] = r.slack.channel
        return {"name": r.name, "slack_configs": [config]}
    if r.pagerduty:
        return {"name": r.name, "pagerduty_configs": [{
            "routing_key_file": secret_file(r.pagerduty.routing_key_secret), "send_resolved": True,
            "severity": PAGERDUTY_SEVERITY, "client": f"gpu-platform {cluster}"}]}
    if r.webhook:
        config = {"url": r.webhook.url, "send_resolved": True}
        if r.webhook.bearer_token_secret:
            config["http_config"] = {"authorization": {
                "type": "Bearer", "credentials_file": secret_file(r.webhook.bearer_token_secret)}}
        return {"name": r.name, "webhook_configs": [config]}
    if r.sns:
        return {"name": r.name, "sns_configs": [{
            "topic_arn": r.sns.topic_arn, "sigv4": {"region": r.sns.region}, "send_resolved": True,
            "subject": _title(cluster)}]}
    raise ValueError(f"receiver {r.name!r}: give one of slack, pagerduty, webhook, sns")


def _title(cluster: str) -> str:
    return ('[{{ .Status | toUpper }}{{ if eq .Status "firing" }}:{{ .Alerts.Firing | len }}{{ end }}] '
            f"{{{{ .CommonLabels.alertname }}}} ({cluster})")


def alertmanager_values(settings: "MonitoringSettings") -> dict[str, Any]:
    """The `alertmanager:` kube-prometheus-stack values for alert delivery ({} without `monitoring.alerting`)."""
    alerting = delivered_alerting(settings.monitoring)
    if alerting is None:
        return {}
    values: dict[str, Any] = {
        "config": alertmanager_config(settings),
        # A fixed name, so the Pod Identity association of SNS receivers names the right account.
        "serviceAccount": {"name": names.ALERTMANAGER_SERVICE_ACCOUNT},
    }
    if secret_keys(alerting):
        values["alertmanagerSpec"] = {"secrets": [names.ALERT_RECEIVERS_SECRET]}
    return values
