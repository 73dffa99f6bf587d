"""Money: the stack's monthly cost with every node group at max size stays within the budget.

Priced by decisions/cost.py, the same model behind the plan's cost section, from what the program
registered: each node group (GPU pools and system nodes) and Karpenter NodePool (limits.nodes as max
size) at its first instance type (a Capacity Block group's, named in its launch template, at the block's rate:
the budget holds the month its whole fee is charged in, for the window the plan gives, else a whole month,
since AWS charges a block once, up front), the EKS control plane, NAT gateways, EBS volumes (launch-template or
EC2NodeClass volumes, or the node group's disk size, times max size), EFS storage (`efsStorageGiB`: a
file system's size is not an input), FSx for Lustre storage (its provisioned capacity is) Prometheus' and Alertmanager's
volumes (the claim templates in the kube-prometheus-stack release's values) and CloudWatch Logs
(`logIngestGbPerMonth`, `logStoredGb`, when log groups are registered: ingestion is no input either). Policies
cannot read the stack
file, so the budget and any price overrides come from the policy config; `gpu-platform plan` passes the
stack file's `budget` and `pricing` itself. Each control plane is priced by the EKS support window of its
`version` on the config's `asOf` day (default today), as the plan's cost section prices it.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import PolicyConfigSchema, Severity, StackValidationArgs

from gpu_platform.decisions.cost import (METRICS_VOLUMES, FixedItem, Pricing, estimate, fsx_lustre_item, log_items,
                                         pool_facts_from_node_group_inputs)
from gpu_platform.facts import catalog
from gpu_platform.policy.common import CLUSTER, FILE_SYSTEM, LAUNCH_TEMPLATE, LUSTRE, NAT_GATEWAY, NODE_GROUP, get, of_type, stack_policy
from gpu_platform.policy.lifecycle import as_of
from gpu_platform.policy.logging import LOG_GROUP
from gpu_platform.policy.metrics import claimed_gib
from gpu_platform.policy.pools import karpenter_disks, pool_resources

EKS_DEFAULT_DISK_GIB = 20  # a managed node group's disk without diskSize or a launch template volume
# What the cost model reads of a node group (read one by one: ids and ARNs may be unknown in a preview).
POOL_FACT_INPUTS = ("instanceTypes", "capacityType", "scalingConfig", "labels", "nodeGroupName")


def pricing_from_config(config: Mapping[str, Any]) -> Pricing:
    return Pricing(float(config.get("spotDiscount", catalog.DEFAULT_SPOT_DISCOUNT)),
                   dict(config.get("spotDiscounts") or {}), dict(config.get("onDemandUsdPerHour") or {}),
                   dict(config.get("fixedPrices") or {}), dict(config.get("capacityBlockUsdPerHour") or {}))


def _disk_gib(ng: Any, templates: Mapping[str, Any]) -> int:
    lt = templates.get(get(ng.props, "launchTemplate.name", ""))
    sizes = [int(m["ebs"].get("volumeSize") or 0) for m in get(lt.props, "blockDeviceMappings", []) if m.get("ebs")] \
        if lt is not None else []
    return sum(sizes) or int(get(ng.props, "diskSize", 0) or 0) or EKS_DEFAULT_DISK_GIB


def fixed_items(args: StackValidationArgs, config: Mapping[str, Any], pricing: Pricing) -> list[FixedItem]:
    clusters, nats = of_type(args, CLUSTER), of_type(args, NAT_GATEWAY)
    templates = {get(lt.props, "name", lt.name): lt for lt in of_type(args, LAUNCH_TEMPLATE)}
    groups = of_type(args, NODE_GROUP)
    disks = [(_disk_gib(ng, templates), int(get(ng.props, "scalingConfig.minSize", 0) or 0),
              int(get(ng.props, "scalingConfig.maxSize", 0) or 0)) for ng in groups] + karpenter_disks(args)
    disk_min, disk_max = sum(g * lo for g, lo, _ in disks), sum(g * hi for g, _, hi in disks)
    efs_gib = float(config.get("efsStorageGiB", 0)) if of_type(args, FILE_SYSTEM) else 0.0
    return [
        *control_planes(clusters, config, pricing),
        FixedItem("natGateways", "NAT gateways", "hour", "NAT gateway", len(nats), len(nats),
                  pricing.fixed("natGateway"), included=bool(nats)),
        FixedItem("ebsRootVolumes", "EBS gp3 volumes", "GB-month", "GB provisioned", disk_min, disk_max,
                  pricing.fixed("ebsGp3")),
        FixedItem("efsModelCache", "EFS model cache", "GB-month", "GB stored", efs_gib, efs_gib,
                  pricing.fixed("efsStandard"), included=bool(efs_gib)),
        *(fsx_lustre_item(get(fs.props, "deploymentType", ""), get(fs.props, "perUnitStorageThroughput"),
                          float(get(fs.props, "storageCapacity", 0) or 0), pricing) for fs in of_type(args, LUSTRE)),
        *_logs(args, config, pricing),
        *_metrics_volumes(args, pricing),
    ]


def _metrics_volumes(args: StackValidationArgs, pricing: Pricing) -> list[FixedItem]:
    """Prometheus' and Alertmanager's claims, from the kube-prometheus-stack release's values."""
    gib = claimed_gib(args)
    return [FixedItem(METRICS_VOLUMES, "EBS gp3 metrics volumes", "GB-month", "GB provisioned", gib, gib,
                      pricing.fixed("ebsGp3"))] if gib else []


def _logs(args: StackValidationArgs, config: Mapping[str, Any], pricing: Pricing) -> list[FixedItem]:
    """CloudWatch Logs at the stated volumes (the stack file's logging.ingestGbPerDay, which no resource holds),
    counted only when log groups are registered."""
    if not of_type(args, LOG_GROUP):
        return []
    return log_items(float(config.get("logIngestGbPerMonth", 0)), float(config.get("logStoredGb", 0)), pricing)


def control_planes(clusters: list, config: Mapping[str, Any], pricing: Pricing) -> list[FixedItem]:
    """One item per price: clusters on versions in different support windows cost differently."""
    if not clusters:
        return [FixedItem("eksControlPlane", "EKS control plane", "hour", "cluster", 0, 0,
                          pricing.fixed("eksControlPlane"), included=False)]
    day = as_of(config)
    quotes = Counter(pricing.control_plane(get(c.props, "version"), day) for c in clusters)
    return [FixedItem("eksControlPlane", "EKS control plane", "hour", "cluster", n, n, quote)
            for quote, n in quotes.items()]


def monthly_at_max(args: StackValidationArgs, config: Mapping[str, Any]) -> tuple[float, list[str]]:
    """USD per month with every node group at max size, in the month a Capacity Block's whole fee is charged
    (AWS charges it once, up front), and the items that have no price."""
    pricing = pricing_from_config(config)
    pools, unreadable = [], []
    for ng in pool_resources(args):
        try:
            pools.append(pool_facts_from_node_group_inputs(
                {k: v for k in POOL_FACT_INPUTS if (v := get(ng.props, k)) is not None}, blocks=config.get("capacityBlocks")))
        except ValueError:  # no instance type to price (e.g. one another program registered unreadably)
            unreadable.append(f"node group {ng.name} (no instance type to price)")
    est = estimate(pools, fixed_items(args, config, pricing), pricing)
    return est.charge_month_at_max, [*est.unpriced, *unreadable]


def within_budget(args: StackValidationArgs, config: Mapping[str, Any]) -> Iterator[tuple[str, Optional[str]]]:
    budget = config.get("monthlyUsd")
    if budget is None:
        return  # no budget configured: nothing to hold the stack to
    try:
        as_of(config)
    except ValueError:
        yield f"policy config asOf {config.get('asOf')!r} is not a date (YYYY-MM-DD)", None
        return
    total, unpriced = monthly_at_max(args, config)
    if total > float(budget):
        note = f" (not counting unpriced {', '.join(unpriced)})" if unpriced else ""
        source = f" ({config['budgetSource']})" if config.get("budgetSource") else ""
        yield (f"at max size the stack costs about ${total:,.0f}/month{note}, over the ${float(budget):,.0f} budget"
               f"{source} by "
               f"${total - float(budget):,.0f}: lower node groups' maxSize, move pools to spot capacity, or raise "
               "monthlyUsd in this policy's config (stack file: nodePools[].maxSize, budget.monthlyUsd)",
               None)


BUDGET_SCHEMA = PolicyConfigSchema({
    "monthlyUsd": {"type": "number", "exclusiveMinimum": 0,
                   "description": "Monthly budget in USD (the stack file's budget.monthlyUsd); unset: no check."},
    "budgetSource": {"type": "string",
                     "description": "Where monthlyUsd comes from, named in the message (gpu-platform plan sets it "
                                    "to the stricter of the stack file's and this config's budget)."},
    "spotDiscount": {"type": "number", "minimum": 0, "maximum": 1, "default": catalog.DEFAULT_SPOT_DISCOUNT,
                     "description": "Fraction off on-demand for spot capacity."},
    "spotDiscounts": {"type": "object", "default": {}, "description": "Per instance type spot discounts."},
    "onDemandUsdPerHour": {"type": "object", "default": {}, "description": "Per instance type price overrides."},
    "capacityBlockUsdPerHour": {"type": "object", "default": {},
                                "description": "Per instance type Capacity Block rates (USD per instance-hour)."},
    "capacityBlocks": {"type": "object", "default": {},
                       "description": "Per pool, a Capacity Block's {hours, instances} in the priced month, its "
                                      "{windowHours, chargeMonth} and its {usdPerHour, source, asOf} (the plan sets "
                                      "them); the budget holds the month its whole fee is charged in. A block "
                                      "without is priced for a whole month at max size."},
    "fixedPrices": {"type": "object", "default": {},
                    "description": "Overrides of eksControlPlane, natGateway (USD/hour), efsStandard, ebsGp3, "
                                   "fsxLustre (USD/GB-month), cloudwatchLogsIngestion (USD/GB), "
                                   "cloudwatchLogsStorage (USD/GB-month)."},
    "efsStorageGiB": {"type": "number", "minimum": 0, "default": 0,
                      "description": "Expected model-cache size (modelCache.storageGiBEstimate)."},
    "logIngestGbPerMonth": {"type": "number", "minimum": 0, "default": 0,
                            "description": "GB the log pipeline sends to CloudWatch Logs per month (the stack file's "
                                           "logging.ingestGbPerDay), counted when log groups are registered."},
    "logStoredGb": {"type": "number", "minimum": 0, "default": 0,
                    "description": "GB CloudWatch Logs keeps at steady state (ingestion x retention days)."},
    "asOf": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$",
             "description": "The day whose EKS support window prices each control plane (YYYY-MM-DD); unset: today."},
})

POLICIES = [
    stack_policy("monthly-budget", "The stack's monthly cost at max size stays within the configured budget.",
                 within_budget, severity=Severity.MEDIUM, schema=BUDGET_SCHEMA),
]
