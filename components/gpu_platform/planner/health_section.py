"""The plan's `health` section: per GPU pool, whether node repair is on (and how), which agents report
GPU faults and whether repair sees them; then where alerts go.

Read from what the program registers (node groups, Karpenter NodePools and the controller's NodeRepair
feature gate, the node monitoring agent add-on, the Prometheus stack's Alertmanager values), never from the
spec, so it shows what would be deployed. JSON shape in docs/monitoring.md; `VERSION` changes only when a
field changes meaning.
"""
from __future__ import annotations

import json
from typing import Any, Optional

from gpu_platform.decisions.node_repair import GPU_CONDITION
from gpu_platform.decisions.tolerations import tolerates
from gpu_platform.facts import catalog, names
from gpu_platform.facts.karpenter import NODE_POOL, NODE_REPAIR_GATE, REPAIR_MAX_UNHEALTHY_PERCENT, REPAIR_POLICIES, node_group_view
from gpu_platform.planner.alertmanager_file import alertmanager_config
from gpu_platform.planner.sections import PlanContext, Section, register
from gpu_platform.planner.tables import md_table, text_table

NAME = "health"
TITLE = "GPU health and alert delivery"
VERSION = 1
NODE_GROUP, ADDON, RELEASE = "aws:eks/nodeGroup:NodeGroup", "aws:eks/addon:Addon", "kubernetes:helm.sh/v3:Release"
KARPENTER_CHART = catalog.KARPENTER_CHART
PROMETHEUS_CHART = catalog.KUBE_PROMETHEUS_STACK_CHART[1]
CHART_RETENTION = "10d"  # prometheus.prometheusSpec.retention in kube-prometheus-stack 79.5.0's values.yaml
AGENT = catalog.NODE_MONITORING_AGENT_ADDON
DEVICE_PLUGIN_OFF = names.gpu_deploy_label("device-plugin")
K8S_EFFECTS = {api: k8s for k8s, api in names.TAINT_EFFECTS.items()}
RECEIVER_KINDS = {"slack_configs": "slack", "pagerduty_configs": "pagerduty", "webhook_configs": "webhook",
                  "sns_configs": "sns"}


def build(ctx: PlanContext) -> Optional[dict[str, Any]]:
    resources = ctx.plan["resources"]
    groups = [r["inputs"] for r in resources
              if r["type"] == NODE_GROUP and names.POOL_LABEL in (r["inputs"].get("labels") or {})]
    node_pools = [v for v in (node_group_view(r["inputs"]) for r in resources if r["type"] == NODE_POOL)
                  if names.POOL_LABEL in v["labels"]]
    if not groups and not node_pools:
        return None
    agent = next((r["inputs"] for r in resources if r["type"] == ADDON and r["inputs"].get("addonName") == AGENT), None)
    config = json.loads(agent.get("configurationValues") or "{}") if agent else {}
    karpenter = karpenter_repair(karpenter_gates(resources))
    return {
        "version": VERSION,
        "nodeMonitoringAgent": {"addonVersion": agent.get("addonVersion")} if agent else None,
        "pools": [*(_pool(g, agent is not None, config) for g in groups),
                  *(_pool(v, agent is not None, config, karpenter) for v in node_pools)],
        "alerting": _alerting(alertmanager_config(ctx.plan)),
        "metrics": metrics(resources),
    }


def _claim_gi(spec: dict[str, Any]) -> Optional[int]:
    requested = (((spec.get("volumeClaimTemplate") or {}).get("spec") or {}).get("resources") or {}).get("requests")
    size = (requested or {}).get("storage")
    return int(str(size).removesuffix("Gi")) if size else None


def metrics(resources: list[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """How long the installed Prometheus keeps samples and where (None: no kube-prometheus-stack release)."""
    release = next((r["inputs"] for r in resources if r["type"] == RELEASE
                    and r["inputs"].get("chart") == PROMETHEUS_CHART), None)
    if release is None:
        return None
    values = release.get("values") or {}
    prom = (values.get("prometheus") or {}).get("prometheusSpec") or {}
    alertmanager = (values.get("alertmanager") or {}).get("alertmanagerSpec") or {}
    return {"retention": prom.get("retention", CHART_RETENTION), "retentionSize": prom.get("retentionSize"),
            "prometheusVolumeGi": _claim_gi(prom.get("storageSpec") or {}),
            "alertmanagerVolumeGi": _claim_gi(alertmanager.get("storage") or {})}


def karpenter_gates(resources: list[dict[str, Any]]) -> dict[str, Any]:
    """The Karpenter release's `settings.featureGates` ({} without one: the chart's defaults)."""
    release: dict[str, Any] = next((r["inputs"] for r in resources if r["type"] == RELEASE and r["inputs"].get("chart") == KARPENTER_CHART),
                   {})
    return ((release.get("values") or {}).get("settings") or {}).get("featureGates") or {}


def karpenter_repair(gates: dict[str, Any]) -> dict[str, Any]:
    """A Karpenter pool's repair in the section's terms: the controller's gate and its fixed policies."""
    if gates.get(NODE_REPAIR_GATE) is not True:
        return {"enabled": False, "by": "karpenter"}
    return {"enabled": True, "by": "karpenter",
            "policies": [{"condition": c, "status": s, "tolerationMinutes": m} for c, s, m in REPAIR_POLICIES],
            "maxUnhealthyPercent": REPAIR_MAX_UNHEALTHY_PERCENT}


def _pool(inputs: dict[str, Any], agent: bool, config: dict[str, Any],
          karpenter: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """A node group's entry, or a Karpenter NodePool's (its node-group view, with `karpenter` its repair)."""
    repair = karpenter or inputs.get("nodeRepairConfig") or {"enabled": False}
    taints = [(t["key"], t.get("value", ""), K8S_EFFECTS[t["effect"]]) for t in inputs.get("taints") or []]
    reporters = []
    agent_runs = False
    if agent:
        node_tolerations = (config.get("nodeAgent") or {}).get("tolerations", [{"operator": "Exists"}])
        dcgm_tolerations = (config.get("dcgmAgent") or {}).get("tolerations", [])
        agent_runs = all(tolerates(node_tolerations, *t) for t in taints)
        if agent_runs:
            dcgm = all(tolerates(dcgm_tolerations, *t) for t in taints)
            reporters.append({"agent": AGENT, "signal": "AcceleratedHardwareReady node condition",
                              "scope": "XID errors and DCGM health" if dcgm else "XID errors only (dcgm-server "
                              "does not tolerate the pool's taints)", "feedsRepair": bool(repair.get("enabled"))})
    labels = inputs.get("labels") or {}
    # A DRA pool's GPUs are the DRA driver's, which reports no device health unless its alpha
    # NVMLDeviceHealthCheck gate is on (GPU Operator 26.7 DRA page): no plugin takes a failed GPU out there.
    if labels.get(names.GPU_ALLOCATION_LABEL) != "dra":
        plugin = "Bottlerocket device plugin" if labels.get(DEVICE_PLUGIN_OFF) == "false" else "GPU Operator device plugin"
        reporters.append({"agent": plugin, "signal": "unhealthy GPUs leave the allocatable count",
                          "scope": "critical XIDs", "feedsRepair": False})
    return {
        "name": inputs["labels"][names.POOL_LABEL],
        "provisioner": "karpenter" if karpenter is not None else "managed-node-group",
        "nodeGroup": None if karpenter is not None else inputs.get("nodeGroupName"),
        "repair": repair,
        "repairOnGpuFaults": bool(repair.get("enabled") and agent_runs),
        "gpuFaultReporters": reporters,
    }


def _alerting(config: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    if config is None:
        return None
    kinds = {r["name"]: next((k for key, k in RECEIVER_KINDS.items() if key in r), "none") for r in config["receivers"]}
    tree = config["route"]
    routes = [{"matchers": r.get("matchers", []), "receiver": r["receiver"], "kind": kinds.get(r["receiver"], "none"),
               "continue": bool(r.get("continue"))} for r in tree.get("routes", [])]
    routes.append({"matchers": [], "receiver": tree["receiver"], "kind": kinds.get(tree["receiver"], "none"),
                   "continue": False})
    return {"receivers": [{"name": n, "kind": k} for n, k in kinds.items()], "routes": routes,
            "inhibitRules": len(config.get("inhibit_rules") or [])}


# --- rendering ---

def repair_text(repair: dict[str, Any]) -> str:
    if not repair.get("enabled"):
        return "off" + (" (Karpenter's NodeRepair feature gate is off)" if repair.get("by") == "karpenter" else "")
    if repair.get("by") == "karpenter":
        shown = {p["condition"]: p["tolerationMinutes"] for p in repair["policies"]
                 if p["condition"] in (GPU_CONDITION, "Ready")}
        after = ", ".join(f"{c} {m}m" for c, m in shown.items())
        return f"on (Karpenter NodeRepair: replaces after {after}; stops above {repair['maxUnhealthyPercent']}% unhealthy)"
    parts = []
    for key, unit in (("maxParallelNodesRepairedCount", "{} at a time"), ("maxParallelNodesRepairedPercentage",
                                                                            "{}% at a time"),
                      ("maxUnhealthyNodeThresholdCount", "stops above {} unhealthy"),
                      ("maxUnhealthyNodeThresholdPercentage", "stops above {}% unhealthy")):
        if key in repair:
            parts.append(unit.format(repair[key]))
    return "on" + (f" ({', '.join(parts)})" if parts else " (EKS defaults)")


def overrides_text(repair: dict[str, Any]) -> str:
    """`XID13 NoAction, XID64 Replace (after 10m)`: one wait when all agree, else one per override."""
    if repair.get("by") == "karpenter":
        return "- (Karpenter's policies are fixed)" if repair.get("enabled") else "-"
    overrides = repair.get("nodeRepairConfigOverrides") or []
    waits = {o["minRepairWaitTimeMins"] for o in overrides}
    items = [f"{o['nodeUnhealthyReason'].removeprefix('Nvidia').removesuffix('Error')} {o['repairAction']}"
             + ("" if len(waits) == 1 else f" after {o['minRepairWaitTimeMins']}m") for o in overrides]
    return ", ".join(items) + (f" (after {waits.pop()}m)" if len(waits) == 1 else "") if items else "-"


def reporters_text(pool: dict[str, Any]) -> str:
    return "; ".join(f"{r['agent']} ({r['scope']}{', repair' if r['feedsRepair'] else ''})"
                     for r in pool["gpuFaultReporters"])


def _pool_rows(section: dict[str, Any]) -> list[list[str]]:
    return [[p["name"], repair_text(p["repair"]), overrides_text(p["repair"]),
             "yes" if p["repairOnGpuFaults"] else "no", reporters_text(p)] for p in section["pools"]]


POOL_HEADERS = ["Pool", "Node repair", "Repair overrides", "Repairs GPU faults", "GPU faults reported by"]


def _route_rows(alerting: dict[str, Any]) -> list[list[str]]:
    return [[", ".join(r["matchers"]) or "(everything else)",
             f"{r['receiver']} ({r['kind']})" + (", and on to the next match" if r.get("continue") else "")]
            for r in alerting["routes"]]


def _agent_line(section: dict[str, Any]) -> str:
    agent = section["nodeMonitoringAgent"]
    if agent is None:
        return (f"{AGENT}: not installed by this stack; node repair sees only the kubelet's Ready condition unless "
                "the cluster runs it already.")
    return f"{AGENT} {agent['addonVersion']}: reports GPU faults as node conditions that node repair acts on."


def _metrics_line(section: dict[str, Any]) -> Optional[str]:
    m = section.get("metrics")
    if m is None:
        return None
    if m["prometheusVolumeGi"] is None:
        return (f"Metrics: Prometheus keeps {m['retention']} in its pod, so history is lost when the pod moves "
                "(monitoring.prometheus.ebsCsiAddonVersion puts it on a volume).")
    return (f"Metrics: Prometheus keeps {m['retention']} (at most {m['retentionSize']}) on a {m['prometheusVolumeGi']} "
            f"GiB gp3 volume, Alertmanager on {m['alertmanagerVolumeGi']} GiB: history survives restarts.")


def _alerting_line(section: dict[str, Any]) -> str:
    alerting = section["alerting"]
    if alerting is None:
        return "Alert delivery: not configured by this stack (monitoring.alerting)."
    kinds = ", ".join(f"{r['name']} ({r['kind']})" for r in alerting["receivers"] if r["kind"] != "none")
    return (f"Alert delivery: receivers {kinds}; {alerting['inhibitRules']} inhibition rules. Routes, first match "
            "wins (a route that goes on delivers and keeps matching):")


def text(section: dict[str, Any]) -> str:
    lines = text_table(POOL_HEADERS, _pool_rows(section))
    lines += ["", f"  {_agent_line(section)}"]
    lines += [f"  {line}" for line in [_metrics_line(section)] if line]
    lines.append(f"  {_alerting_line(section)}")
    if section["alerting"]:
        lines += text_table(["Alert labels", "Receiver"], _route_rows(section["alerting"]), indent="    ")
    return "\n".join(lines)


def markdown(section: dict[str, Any]) -> str:
    metrics_line = _metrics_line(section)
    lines = [*md_table(POOL_HEADERS, _pool_rows(section)), "", _agent_line(section), "",
             *([metrics_line, ""] if metrics_line else []), _alerting_line(section)]
    if section["alerting"]:
        lines += ["", *md_table(["Alert labels", "Receiver"], [[f"`{m}`" if m != "(everything else)" else m, r]
                                                               for m, r in _route_rows(section["alerting"])])]
    return "\n".join(lines)


SECTION = register(Section(NAME, TITLE, build, text, markdown))
