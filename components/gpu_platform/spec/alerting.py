"""`monitoring.alerting`: who gets which alert, as the stack file states it.

Receivers name Pulumi config keys for their secrets (`pulumi config set --secret <key> <value>`); a
secret written into the stack file in plaintext is refused with the field that held it. Routes map a
severity to a receiver, for the platform here and per team in `teams[].alerting` (alerts from the team's
namespace). The rendering
is render/alert_routing.py; the cross-field rules are `alerting_rules`.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Optional, Union
from urllib.parse import urlsplit

from pydantic import Field, field_validator
from pydantic.alias_generators import to_camel, to_snake

from gpu_platform.spec.field_path import TEAMS, FieldPath, Problem
from gpu_platform.spec.fields import DnsLabel
from gpu_platform.spec.strict import StrictModel

if TYPE_CHECKING:
    from gpu_platform.spec.models import AlertThresholds, MonitoringSpec, PlatformSpec

SEVERITIES = ("critical", "high", "warning", "info")  # the `severity` labels the platform's rules use
ROUTE_KEYS = (*SEVERITIES, "default")
NULL_RECEIVER = "null"  # swallows the stack's heartbeat alerts (Watchdog, InfoInhibitor)
CONFIG_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,62}$")  # also a valid Secret data key (a file name)
DURATION = re.compile(r"^(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?$")  # Prometheus' duration
LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_SECONDS = {"y": 31536000, "w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 0.001}
# Fields people write when they paste the secret itself: receiver kind -> {field: what it holds}.
PLAINTEXT_FIELDS = {
    "slack": ("webhookUrlSecret", {"webhookUrl": "Slack webhook URL", "apiUrl": "Slack webhook URL",
                                   "url": "Slack webhook URL", "webhook": "Slack webhook URL"}),
    "pagerduty": ("routingKeySecret", {"routingKey": "PagerDuty routing key", "serviceKey": "PagerDuty routing key",
                                       "integrationKey": "PagerDuty routing key", "key": "PagerDuty routing key"}),
    "webhook": ("bearerTokenSecret", {"bearerToken": "webhook bearer token", "token": "webhook bearer token",
                                      "password": "webhook password", "urlSecret": "webhook URL"}),
}


def _config_key(value: Optional[str]) -> Optional[str]:
    if value is None:
        return value
    if "://" in value or re.fullmatch(r"[0-9a-fA-F]{32}", value):
        raise ValueError("holds the secret itself: store it with `pulumi config set --secret <key> <value>` and "
                         "give the key's name here")
    if not CONFIG_KEY.fullmatch(value):
        raise ValueError("must name a Pulumi config key of this project (letters, digits, - and _, starting "
                         "with a letter) that holds the secret")
    return value


SLACK_CHANNEL_MAX = 80  # Slack's limit on a channel name


class SlackReceiverSpec(StrictModel):
    """A Slack incoming webhook receiver."""

    webhook_url_secret: str  # config key holding the incoming-webhook URL
    # Letters of any script, digits, `.`, `-` and `_`. The length is checked apart: a bounded repeat of a
    # Unicode class (`{1,80}`) costs the regex engine some 25 ms to compile, a third of the whole schema's.
    channel: Optional[str] = Field(None, pattern=r"^[#@]?[\w.-]+$")

    _key = field_validator("webhook_url_secret")(_config_key)

    @field_validator("channel")
    @classmethod
    def _channel_length(cls, value: Optional[str]) -> Optional[str]:
        name = value[1:] if value and value[0] in "#@" else value
        if name is not None and len(name) > SLACK_CHANNEL_MAX:
            raise ValueError(f"a Slack channel name has at most {SLACK_CHANNEL_MAX} characters, not {len(name)}")
        return value


class PagerDutyReceiverSpec(StrictModel):
    """A PagerDuty Events API receiver."""

    routing_key_secret: str  # config key holding the Events API v2 routing (integration) key

    _key = field_validator("routing_key_secret")(_config_key)


class WebhookReceiverSpec(StrictModel):
    """A generic webhook receiver."""

    url: str  # the endpoint: not a secret, so it may not carry credentials
    bearer_token_secret: Optional[str] = None  # config key holding a bearer token sent with each call

    _key = field_validator("bearer_token_secret")(_config_key)

    @field_validator("url")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError("carries a credential (user info or a query string): a plaintext secret in the stack "
                             "file is refused; authenticate with bearerTokenSecret instead")
        if parts.hostname == "hooks.slack.com":
            raise ValueError("is a Slack incoming webhook, whose URL is itself the secret: use a slack receiver "
                             "with webhookUrlSecret")
        return value


class SnsReceiverSpec(StrictModel):
    """An Amazon SNS topic receiver."""

    topic_arn: str = Field(pattern=r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$")

    @property
    def region(self) -> str:
        return self.topic_arn.split(":")[3]


class ReceiverSpec(StrictModel):
    """One alert receiver: Slack, PagerDuty, a webhook or an SNS topic."""

    # The name routes refer to
    name: DnsLabel
    slack: Optional[SlackReceiverSpec] = None
    pagerduty: Optional[PagerDutyReceiverSpec] = None
    webhook: Optional[WebhookReceiverSpec] = None
    sns: Optional[SnsReceiverSpec] = None

    @property
    def kinds(self) -> list[str]:
        return [k for k in PLAINTEXT_FIELDS.keys() | {"sns"} if getattr(self, k) is not None]

    def secret_keys(self) -> list[tuple[str, str]]:
        """(field, config key) of each secret this receiver reads."""
        found: list[tuple[str, str]] = []
        if self.slack:
            found.append(("slack.webhookUrlSecret", self.slack.webhook_url_secret))
        if self.pagerduty:
            found.append(("pagerduty.routingKeySecret", self.pagerduty.routing_key_secret))
        if self.webhook and self.webhook.bearer_token_secret:
            found.append(("webhook.bearerTokenSecret", self.webhook.bearer_token_secret))
        return found


class SeverityRoutesSpec(StrictModel):
    """Receiver per severity; `default` takes every severity not listed."""

    critical: Optional[str] = None  # the receiver critical alerts go to
    high: Optional[str] = None  # the receiver high alerts go to
    warning: Optional[str] = None  # the receiver warning alerts go to
    info: Optional[str] = None  # the receiver info alerts go to
    default: Optional[str] = None  # the receiver of every severity not listed

    def routes(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in ROUTE_KEYS if getattr(self, k) is not None}


class AlertingSpec(StrictModel):
    """Where alerts go: receivers and the routes per severity."""

    receivers: list[ReceiverSpec] = Field(min_length=1)
    platform: SeverityRoutesSpec  # everything no team route takes; `default` is required
    # Labels Alertmanager groups notifications by
    group_by: list[str] = Field(default_factory=lambda: ["alertname", "namespace", "node"])
    group_wait: str = "30s"
    group_interval: str = "5m"
    repeat_interval: str = "4h"
    critical_repeat_interval: str = "1h"

    def receiver(self, name: str) -> Optional[ReceiverSpec]:
        return next((r for r in self.receivers if r.name == name), None)


def plaintext_secret_message(loc: tuple[Union[str, int], ...]) -> Optional[str]:
    """The message for an unknown field that held a plaintext secret, or None."""
    if len(loc) < 2 or "receivers" not in loc:
        return None
    kind, field = str(loc[-2]), str(loc[-1])
    secret_field, fields = PLAINTEXT_FIELDS.get(kind, ("", {}))
    if field not in fields:
        return None
    return (f"a plaintext {fields[field]} in the stack file is refused: store it with `pulumi config set --secret "
            f"<key> <value>` and name the key in `{secret_field}`")


def seconds(duration: str) -> float:
    return sum(int(n) * _SECONDS[u] for n, u in re.findall(r"(\d+)(ms|[ywdhms])", duration))


def alerting_rules(spec: "PlatformSpec") -> Iterator[Problem]:
    teams = [(TEAMS.index(i) / "alerting", t.alerting) for i, t in enumerate(spec.teams) if t.alerting]
    yield from monitoring_rules(spec.monitoring, teams, spec.prod)


INSTALL_ONLY = ("ebs_csi_addon_version", "storage_gi")  # PrometheusSpec fields that make volumes
MONITORING = FieldPath.of("monitoring")


def monitoring_rules(mon: "MonitoringSpec", team_routes: Sequence[tuple[FieldPath, SeverityRoutesSpec]], prod: bool,
                     at: FieldPath = MONITORING) -> Iterator[Problem]:
    """Alert tiers, receivers and routes (the platform's and each team's, given as (path, routes))."""
    yield from _tier_rules(mon.alerts, at)
    yield from _usage_report_rules(mon, at)
    alerting = mon.alerting
    installs = mon.enabled and mon.prometheus.mode == "install"
    if mon.prometheus.mode != "install":  # an existing Prometheus keeps its own storage
        for name in INSTALL_ONLY:
            if getattr(mon.prometheus, name) is not None:
                yield at / "prometheus" / to_camel(name), "applies only when monitoring.prometheus.mode is install"
    if alerting is None:
        for path, _ in team_routes:
            yield path, f"names receivers, which are defined in {at / 'alerting.receivers'}"
        if prod and installs:
            yield (at / "alerting", "prod alerts must reach someone: add receivers and routes (see "
                   "docs/monitoring.md, Alert delivery)")
        return
    yield from _receiver_rules(alerting, at)
    yield from _route_rules(alerting, team_routes, at)
    yield from _timing_rules(alerting, at)


def _usage_report_rules(mon: "MonitoringSpec", at: FieldPath) -> Iterator[Problem]:
    report = mon.usage_report
    if not report.enabled:
        return
    mode = mon.prometheus.mode if mon.enabled else "none"
    if mode == "none":
        yield (at / "usageReport.enabled", "the report queries Prometheus: set monitoring.prometheus.mode to install "
               "or existing, or leave the report off")
    elif mode == "existing" and report.prometheus_url is None:
        yield (at / "usageReport.prometheusUrl", "required with monitoring.prometheus.mode existing: the URL of its "
               "Prometheus HTTP API inside the cluster, e.g. http://prometheus-operated.monitoring.svc:9090")


def _tier_rules(t: "AlertThresholds", at: FieldPath) -> Iterator[Problem]:
    for warning, critical in (("memoryUsedPercent", "memoryCriticalPercent"),
                              ("temperatureCelsius", "temperatureCriticalCelsius")):
        w, c = getattr(t, to_snake(warning)), getattr(t, to_snake(critical))
        if c <= w:
            yield at / "alerts" / critical, f"must be above {warning} ({w:g}): it is the critical tier"
    if t.reservation_critical_hours >= t.reservation_warning_hours:
        yield (at / "alerts.reservationCriticalHours",
               f"must be below reservationWarningHours ({t.reservation_warning_hours}): it is the critical tier")


def _receiver_rules(alerting: AlertingSpec, at: FieldPath) -> Iterator[Problem]:
    seen: dict[str, int] = {}
    for i, r in enumerate(alerting.receivers):
        where = (at / "alerting.receivers").index(i)
        if r.name == NULL_RECEIVER:
            yield where / "name", f"{NULL_RECEIVER!r} is reserved for the stack's heartbeat alerts"
        if r.name in seen:
            also = FieldPath.of("receivers").index(seen[r.name])
            yield where / "name", f"duplicate receiver {r.name!r} (also {also})"
        seen.setdefault(r.name, i)
        if len(r.kinds) != 1:
            yield where, "give exactly one of slack, pagerduty, webhook, sns"


def _route_rules(alerting: AlertingSpec, team_routes: Sequence[tuple[FieldPath, SeverityRoutesSpec]],
                 at: FieldPath) -> Iterator[Problem]:
    names = [r.name for r in alerting.receivers]
    tables = [(at / "alerting.platform", alerting.platform), *team_routes]
    for where, routes in tables:
        for severity, receiver in routes.routes().items():
            if receiver not in names:
                yield where / severity, f"no receiver {receiver!r}; receivers: {', '.join(names)}"
    if alerting.platform.default is None:
        yield (at / "alerting.platform.default", "required: the receiver for everything no other route takes "
               "(alerts from teams without their own receiver included)")


def _timing_rules(alerting: AlertingSpec, at: FieldPath) -> Iterator[Problem]:
    for field in ("group_wait", "group_interval", "repeat_interval", "critical_repeat_interval"):
        value = getattr(alerting, field)
        if not value or not DURATION.fullmatch(value) or seconds(value) <= 0:
            yield at / "alerting" / to_camel(field), "must be a positive duration such as 30s, 5m or 4h"
            return
    for field in ("repeat_interval", "critical_repeat_interval"):
        if seconds(getattr(alerting, field)) < seconds(alerting.group_interval):
            yield (at / "alerting" / to_camel(field),
                   f"must be >= groupInterval ({alerting.group_interval}): notifications repeat per group interval")
    for j, label in enumerate(alerting.group_by):
        if label != "..." and not LABEL_NAME.fullmatch(label):
            yield (at / "alerting.groupBy").index(j), "must be a label name (or `...` for no grouping)"
