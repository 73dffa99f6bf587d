"""The log pipeline: Fluent Bit's chart values and config, the log groups and the IAM documents around them.

Fluent Bit (fluent/helm-charts `fluent-bit`, pinned in the stack file) runs on every node and ships each team
namespace's container logs to that team's log group, everything else (platform namespaces, the node's kernel
journal) to the platform's group. It also counts GPU failure lines (facts/log_patterns.py) with its
log_to_metrics filter and serves the counters to Prometheus. The config uses Fluent Bit's classic syntax
(Fluent Bit manual, administration/configuring-fluent-bit/classic-mode).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from gpu_platform.decisions.log_volume import retention_days
from gpu_platform.facts import names
from gpu_platform.facts.log_patterns import LOG_PATTERNS, LogPattern

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

LOG_METRICS_TAG = "log_metrics"
LOG_METRICS_PORT = 2021
LOG_METRICS_PORT_NAME = "log-metrics"
CONTAINER_LOGS = "/var/log/containers"
KERNEL_TAG = "node.kernel"
# Every taint, on every pool the stack has now or later: the pipeline must run where the GPUs fail.
TOLERATE_ALL = ({"operator": "Exists"},)
# Read a team's own log group and nothing else (CloudWatch Logs API: these take a log-group resource).
READ_ACTIONS = ("logs:DescribeLogStreams", "logs:FilterLogEvents", "logs:GetLogEvents", "logs:StartLiveTail",
                "logs:StartQuery")
WRITE_ACTIONS = ("logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents")


@dataclass(frozen=True)
class LogDestination:
    group: str  # log group name
    namespaces: tuple[str, ...]  # the team's namespace, or () for the platform's group (everything else)


@dataclass(frozen=True)
class LoggingSettings:
    """What the log pipeline registers, decided from the stack file: the component reads nothing else."""

    cluster: str  # the stack file's cluster name (role names)
    namespace: str  # Fluent Bit's
    chart_version: str
    kms_key_arn: Optional[str]  # None: the pipeline makes a key
    retention_days: int
    destinations: Mapping[str, LogDestination]  # team (or `platform`) -> its group
    team_readers: Mapping[str, tuple[str, ...]]  # team -> roles that may take its read role (none: the account's)
    chart_values: Mapping[str, Any]
    rule_namespace: str  # Prometheus', where the log-derived alerts go
    rule_labels: Mapping[str, str]  # what Prometheus selects its rules by

    @classmethod
    def of(cls, spec: "PlatformSpec", region: str, service_monitor: bool) -> "LoggingSettings":
        log, prom = spec.logging, spec.monitoring.prometheus
        readers = {t.name: (*t.access.developer_role_arns, *t.access.admin_role_arns) for t in spec.teams}
        return cls(spec.cluster.name, log.namespace, log.chart_version, log.kms_key_arn, retention_days(spec),
                   destinations(spec), readers, chart_values(spec, region, service_monitor), prom.namespace,
                   {**prom.selector_labels, names.MANAGED_BY_LABEL: names.MANAGED_BY})


def destinations(spec: "PlatformSpec") -> dict[str, LogDestination]:
    """Key (team namespace, or `platform`) -> where its logs go."""
    cluster = spec.cluster.name
    out = {t.name: LogDestination(names.log_group_name(cluster, t.name), (names.team_namespace(t.name),))
           for t in spec.teams}
    out[names.PLATFORM_LOG_GROUP] = LogDestination(names.log_group_name(cluster, names.PLATFORM_LOG_GROUP), ())
    return out


def section(kind: str, entries: list[tuple[str, str]]) -> str:
    return "\n".join([f"[{kind}]", *(f"    {k} {v}" for k, v in entries)]) + "\n"


def _team_path(namespace: str) -> str:
    # kubelet names container log files <pod>_<namespace>_<container>-<id>.log
    return f"{CONTAINER_LOGS}/*_{namespace}_*.log"


def _tail(path: str, tag: str, exclude: list[str]) -> str:
    entries = [("Name", "tail"), ("Path", path), ("Tag", tag), ("multiline.parser", "cri"),
               ("Mem_Buf_Limit", "50MB"), ("Skip_Long_Lines", "On"), ("Refresh_Interval", "10")]
    if exclude:
        entries.append(("Exclude_Path", ",".join(exclude)))
    return section("INPUT", entries)


def inputs(spec: "PlatformSpec") -> str:
    teams = [names.team_namespace(t.name) for t in spec.teams]
    parts = [_tail(_team_path(ns), f"team.{ns}.*", []) for ns in teams]
    parts.append(_tail(f"{CONTAINER_LOGS}/*.log", "platform.*", [_team_path(ns) for ns in teams]))
    parts.append(section("INPUT", [("Name", "systemd"), ("Tag", KERNEL_TAG), ("Path", "/var/log/journal"),
                                   ("Systemd_Filter", "_TRANSPORT=kernel"), ("Read_From_Tail", "On")]))
    return "\n".join(parts)


def _kubernetes(match: str) -> str:
    # The filter reads pod metadata from the tag: strip the tag's prefix up to the log file's name.
    prefix = match.rstrip("*") + CONTAINER_LOGS.strip("/").replace("/", ".") + "."
    return section("FILTER", [("Name", "kubernetes"), ("Match", match), ("Kube_Tag_Prefix", prefix),
                              ("Merge_Log", "Off"), ("Labels", "Off"), ("Annotations", "Off")])


def _counter(p: LogPattern) -> str:
    kernel = p.source == "kernel"
    entries = [("Name", "log_to_metrics"),
               ("Match" if kernel else "Match_Regex", KERNEL_TAG if kernel else r"^(team|platform)\."),
               ("Tag", LOG_METRICS_TAG), ("metric_mode", "counter"), ("metric_name", p.metric),
               ("metric_description", p.description), ("regex", f"{'MESSAGE' if kernel else 'log'} {p.regex}")]
    entries += [("add_label", "node ${NODE_NAME}")] if kernel else [("kubernetes_mode", "On")]
    return section("FILTER", entries)


def filters(spec: "PlatformSpec") -> str:
    parts = [_kubernetes(f"team.{names.team_namespace(t.name)}.*") for t in spec.teams] + [_kubernetes("platform.*")]
    return "\n".join(parts + [_counter(p) for p in LOG_PATTERNS])


def _cloudwatch(match: tuple[str, str], group: str, region: str, pods: bool) -> str:
    entries = [("Name", "cloudwatch_logs"), match, ("region", region), ("log_group_name", group),
               ("log_stream_prefix", "node-"), ("auto_create_group", "Off"), ("Retry_Limit", "False")]
    if pods:
        entries.insert(5, ("log_stream_template", "$kubernetes['pod_name'].$kubernetes['container_name']"))
    return section("OUTPUT", entries)


def outputs(spec: "PlatformSpec", region: str) -> str:
    dests = destinations(spec)
    parts = [_cloudwatch(("Match", f"team.{ns}.*"), d.group, region, True)
             for d in dests.values() for ns in d.namespaces]
    platform = dests[names.PLATFORM_LOG_GROUP].group
    parts.append(_cloudwatch(("Match", "platform.*"), platform, region, True))
    parts.append(_cloudwatch(("Match", KERNEL_TAG), platform, region, False))
    parts.append(section("OUTPUT", [("Name", "prometheus_exporter"), ("Match", LOG_METRICS_TAG),
                                    ("Host", "0.0.0.0"), ("Port", str(LOG_METRICS_PORT))]))
    return "\n".join(parts)


def chart_values(spec: "PlatformSpec", region: str, service_monitor: bool) -> dict[str, Any]:
    """Values of the pinned fluent-bit chart (every key is in its values.yaml, kept in facts/upstream/)."""
    return {
        "kind": "DaemonSet",
        "serviceAccount": {"create": True, "name": names.FLUENT_BIT_SERVICE_ACCOUNT},
        "tolerations": [dict(t) for t in TOLERATE_ALL],
        "priorityClassName": "system-node-critical",
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "extraPorts": [{"port": LOG_METRICS_PORT, "containerPort": LOG_METRICS_PORT, "protocol": "TCP",
                        "name": LOG_METRICS_PORT_NAME}],
        "serviceMonitor": {"enabled": service_monitor,
                           "additionalEndpoints": [{"port": LOG_METRICS_PORT_NAME, "path": "/metrics"}]},
        "config": {"inputs": inputs(spec), "filters": filters(spec), "outputs": outputs(spec, region)},
    }


def writer_policy(group_arns: list[str]) -> dict[str, Any]:
    """Fluent Bit's role: write streams and events into the platform's log groups only."""
    return {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": list(WRITE_ACTIONS),
        "Resource": sorted({r for a in group_arns for r in (a, f"{a}:*")})}]}


def team_read_policy(group_arn: str) -> dict[str, Any]:
    """A team's read access: its own log group (and its streams), nothing else."""
    return {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": list(READ_ACTIONS), "Resource": [group_arn, f"{group_arn}:*"]}]}


def team_read_trust(role_arns: list[str]) -> dict[str, Any]:
    """Who may take a team's read role: the team's own developer and admin roles."""
    return {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"AWS": sorted(role_arns)}, "Action": "sts:AssumeRole"}]}


def key_policy(account_root: str, region: str) -> dict[str, Any]:
    """The log groups' KMS key: the account administers it; CloudWatch Logs in this region may use it
    (CloudWatch Logs user guide, encrypt log data using AWS KMS)."""
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "Account", "Effect": "Allow", "Principal": {"AWS": account_root}, "Action": "kms:*",
         "Resource": "*"},
        {"Sid": "CloudWatchLogs", "Effect": "Allow", "Principal": {"Service": f"logs.{region}.amazonaws.com"},
         "Action": ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
         "Resource": "*"}]}
