"""The plan's `cost` section: an estimate of what the stack costs, from the catalog's dated prices.

Computed from the validated spec with decisions.cost (the same model the policy pack's budget rule
uses). Figures are rounded for JSON only: monthly USD to cents, hourly USD to 4 decimals, unit prices
to 6. JSON shape documented in docs/cost.md; `VERSION` changes only when a field changes meaning.
"""
from __future__ import annotations

from datetime import date, datetime
from typing import Any, Optional

from gpu_platform.decisions import lifecycle, reservations
from gpu_platform.decisions.cost import (EXCLUSIONS, HOURS, SPOT, CostEstimate, FixedItem, PoolEstimate, TeamCost,
                                         estimate_spec, stale_block_rates, team_costs)
from gpu_platform.facts import catalog
from gpu_platform.planner.capacity_section import short
from gpu_platform.planner.sections import PlanContext, Section, register
from gpu_platform.planner.tables import count, md_table, money, percent, rate, span, text_table
from gpu_platform.spec.models import NodePoolSpec, PlatformSpec

NAME = "cost"
TITLE = "Cost estimate (USD)"
VERSION = 1
CURRENCY = "USD"


def build(ctx: PlanContext) -> Optional[dict[str, Any]]:
    return None if ctx.spec is None else from_spec(ctx.spec, ctx.stack.config.get("aws:region"), ctx.as_of)


def from_spec(spec: PlatformSpec, region: Optional[str] = None, as_of: Optional[date] = None) -> dict[str, Any]:
    """The section for `spec`; the control plane priced by its EKS support window on `as_of` (default today)."""
    as_of = as_of or date.today()
    est = estimate_spec(spec, as_of)
    budget = None
    if est.budget is not None:
        budget = {"monthlyUsd": est.budget.monthly_usd, "headroomAtMax": _m(est.budget.headroom_at_max),
                  "withinBudget": est.budget.within_budget,
                  **({"month": est.charge_month} if est.charge_month is not None else {})}
    return {
        "version": VERSION, "currency": CURRENCY, "estimate": True, "hoursPerMonth": HOURS,
        "prices": {"asOf": est.prices_as_of, "region": catalog.PRICE_REGION, "spotDiscount": est.spot_discount,
                   "sources": [{"source": q.source, "asOf": q.as_of} for q in est.sources]},
        "pools": [_pool(p, pool, as_of) for p, pool in zip(est.pools, spec.node_pools, strict=True)],
        "fixed": [_fixed(f) for f in est.fixed],
        "totals": {"hourlyUsdAtMin": _h(est.hourly_at_min), "hourlyUsdAtMax": _h(est.hourly_at_max),
                   "monthlyUsdAtMin": _m(est.monthly_at_min), "monthlyUsdAtMax": _m(est.monthly_at_max),
                   "unpriced": est.unpriced, **_charges(est)},
        "budget": budget,
        "teams": [_team(t) for t in team_costs(spec)],
        "exclusions": list(EXCLUSIONS),
        "notes": _notes(est, region) + _support_notes(spec, as_of) + _serving_notes(est),
        **({"warnings": stale} if (stale := stale_block_rates(est, as_of)) else {}),
    }


def _charges(est: CostEstimate) -> dict[str, Any]:
    """Capacity Block fees by the month they are charged in, and that month's total at max size (what the
    budget is held to); nothing without blocks."""
    if not est.charges:
        return {}
    return {"upfrontCharges": {m: _m(v) for m, v in sorted(est.charges.items())},
            "chargeMonth": est.charge_month, "monthlyUsdInChargeMonthAtMax": _m(est.charge_month_at_max)}


def _pool(p: PoolEstimate, pool: NodePoolSpec, as_of: date) -> dict[str, Any]:
    f, quote = p.facts, p.quote
    return {
        "name": f.name, "pricedInstanceType": f.priced_type, "instanceTypes": list(f.instance_types),
        "capacityType": f.capacity_type, "minSize": f.min_size, "maxSize": f.max_size,
        "nodesAtMin": f.nodes_at_min,
        "gpusPerNode": p.gpus_per_node, "gpu": p.gpu,
        "onDemandUsdPerNodeHour": _u(p.on_demand.usd if p.on_demand else None), "discount": p.discount,
        "usdPerNodeHour": _u(p.usd_per_node_hour), "usdPerGpuHour": _u(p.usd_per_gpu_hour),
        "hourlyUsdAtMin": _h(p.hourly_at_min), "hourlyUsdAtMax": _h(p.hourly_at_max),
        "monthlyUsdAtMin": _m(p.monthly_at_min), "monthlyUsdAtMax": _m(p.monthly_at_max),
        "source": quote.source if quote else None, "asOf": quote.as_of if quote else None,
        "reservation": _reservation(p, pool, as_of),
        **({"warm": {"nodes": f.warm, "monthlyUsd": _m(p.warm_monthly)}} if f.warm else {}),
    }


def _reservation(p: PoolEstimate, pool: NodePoolSpec, as_of: date) -> Optional[dict[str, Any]]:
    """What the pool reserves: a Capacity Block's window and its hours in the month, or an ODCR's id."""
    kind = reservations.kind(pool)
    if not kind:
        return None
    r = reservations.reservation(pool)
    out: dict[str, Any] = {"id": r.id, "kind": kind, "instances": p.facts.reserved or None}
    if kind == reservations.CAPACITY_BLOCK:
        start, end = reservations.window(pool)
        out.update(start=_iso(start), end=_iso(end), month=f"{as_of:%Y-%m}",
                   hoursInMonth=round(p.block_hours, 2), state=reservations.state(pool, as_of),
                   paidUpFront=True, windowHours=round(p.facts.window_hours or 0, 2),
                   upfrontUsd=_m(p.block_fee), chargeMonth=p.facts.charge_month,
                   rate="quoted" if p.facts.quote else "stack" if p.quote and p.quote.as_of == "stack" else "catalog")
    return out


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _fixed(f: FixedItem) -> dict[str, Any]:
    return {
        "key": f.key, "label": f.label, "unit": f.unit, "what": f.what,
        "quantityAtMin": f.quantity_at_min, "quantityAtMax": f.quantity_at_max,
        "usdPerUnit": _u(f.price.usd if f.price else None), "included": f.included, "note": f.note,
        "monthlyUsdAtMin": _m(f.monthly_at_min), "monthlyUsdAtMax": _m(f.monthly_at_max),
        "source": f.price.source if f.price else None, "asOf": f.price.as_of if f.price else None,
    }


def _team(t: TeamCost) -> dict[str, Any]:
    return {
        "name": t.name, "onDemandMonthlyUsd": _m(t.on_demand_monthly), "spotMonthlyUsd": _m(t.spot_monthly),
        "resources": [{
            "resource": s.resource, "quota": s.quota, "capacityAtMax": s.capacity_at_max, "share": _u(s.share),
            "onDemandUsdPerUnitHour": _u(s.unit.on_demand_usd_per_hour if s.unit else None),
            "spotUsdPerUnitHour": _u(s.unit.spot_usd_per_hour if s.unit else None),
            "onDemandMonthlyUsd": _m(s.on_demand_monthly), "spotMonthlyUsd": _m(s.spot_monthly),
        } for s in t.shares],
    }


def _notes(est: CostEstimate, region: Optional[str]) -> list[str]:
    blocks = [p for p in est.pools if p.is_block]
    notes = [f"Capacity Blocks ({', '.join(p.name for p in blocks)}) are paid once, up front, when bought, for every "
             "hour of their window, used or not: each pool's monthly figure is the fee amortised (its rate x its "
             "instances x the window's hours in this month); the whole fee falls in its charge month (the month of "
             "reservation.quotedOn, else of its start), and the budget is held to that month "
             "(set reservation.quotedUsdPerHour to your offering's rate)."] if blocks else []
    notes += ["Each pool is priced at its first instance type (the type managed node groups launch first and the "
             "Cluster Autoscaler sizes from); a pool running on a pricier fallback type costs more.",
             f"Spot = on-demand x (1 - discount); default discount {est.spot_discount:g}, per type in "
             "pricing.spotDiscounts. Spot prices move hourly: treat spot figures as a planning range.",
             "Team figures: quota x capacity-weighted price per schedulable unit at max size, for a full month; "
             "a MIG slice costs its compute share of a GPU-hour (slices of 7; of 4 on an RTX PRO 6000), a time-sliced "
             "unit a GPU-hour over replicas."]
    if region and region != catalog.PRICE_REGION:
        notes.append(f"Catalog prices are for {catalog.PRICE_REGION}; this stack runs in {region}: set "
                     "pricing.onDemandUsdPerHour for that region's prices.")
    if est.unpriced:
        notes.append(f"No price known for {', '.join(est.unpriced)}: left out of the totals.")
    return notes


def _serving_notes(est: CostEstimate) -> list[str]:
    """Pools whose services' minimum replicas keep more nodes running than the pool's minSize."""
    return [f"{p.name}: {p.facts.nodes_at_min} node(s) at min, held by its services' minimum replicas "
            f"(minSize {p.facts.min_size}; teams[].services[].replicas.min)"
            for p in est.pools if p.facts.nodes_at_min > p.facts.min_size]


def _support_notes(spec: PlatformSpec, as_of: date) -> list[str]:
    """Why the control plane costs the extended-support rate, when it does."""
    version = spec.cluster.kubernetes_version
    window = lifecycle.kubernetes_window(version, as_of)
    if window not in (lifecycle.EXTENDED, lifecycle.END_OF_LIFE) or spec.pricing.eks_control_plane_usd_per_hour:
        return []
    price = catalog.EKS_CONTROL_PLANE_EXTENDED.usd_per_hour
    return [f"EKS control plane at the extended-support rate (${price:.2f}/h): Kubernetes {version} is past its end "
            f"of standard support ({catalog.EKS_KUBERNETES[version].end_of_standard}) on {as_of}."]


def _m(usd: Optional[float]) -> Optional[float]:
    """Monthly USD: cents."""
    return None if usd is None else round(usd, 2)


def _h(usd: Optional[float]) -> Optional[float]:
    """Hourly totals: 4 decimals."""
    return None if usd is None else round(usd, 4)


def _u(x: Optional[float]) -> Optional[float]:
    """Unit prices and fractions: 6 decimals, enough for every catalog price."""
    return None if x is None else round(x, 6)


# --- rendering (from the JSON section, so text, Markdown and JSON never disagree) ---

def _heading(section: dict[str, Any]) -> str:
    p = section["prices"]
    return (f"An estimate in {section['currency']}, not a quote: catalog prices as of {p['asOf']} "
            f"({p['region']}, Linux), {section['hoursPerMonth']} hours a month.")


def _pool_label(p: dict[str, Any]) -> str:
    r = p.get("reservation")
    if r and r["kind"] == reservations.CAPACITY_BLOCK:
        return (f"{p['pricedInstanceType']} capacity block at the {r['rate']} rate of {p['asOf']}, {r['instances']} x "
                f"{r['hoursInMonth']:g} h in {r['month']} amortised; fee ${money(r['upfrontUsd'])} charged in "
                f"{r['chargeMonth']}")
    spot = f" at {p['discount'] * 100:g}% off" if p["capacityType"] == SPOT else ""
    odcr = f" in {r['id']}" if r else ""
    w = p.get("warm")
    warm = f"; {w['nodes']} warm (${money(w['monthlyUsd'])}/month held)" if w else ""
    return f"{p['pricedInstanceType']} {p['capacityType']}{spot}{odcr}{warm}"


def _quantity(f: dict[str, Any]) -> str:
    sep = " x " if f["unit"] == "hour" else " "  # "3 x NAT gateway", "200 GB stored"
    return f"{span(f['quantityAtMin'], f['quantityAtMax'])}{sep}{f['what']}"


def _unit_price(f: dict[str, Any]) -> str:
    return "unknown" if f["usdPerUnit"] is None else f"${rate(f['usdPerUnit'])}/{f['unit']}"


def _budget_line(section: dict[str, Any]) -> Optional[str]:
    b = section["budget"]
    if b is None:
        return None
    month = f" in {b['month']}, with the Capacity Block fees charged then" if b.get("month") else ""
    head = f"Budget ${money(b['monthlyUsd'])}/month{month}: "
    if b["withinBudget"]:
        return head + f"headroom at max size ${money(b['headroomAtMax'])} (within budget)"
    return head + f"max size exceeds it by ${money(-b['headroomAtMax'])} (OVER BUDGET)"


def text(section: dict[str, Any]) -> str:
    lines = [f"  {_heading(section)}"]
    pool_rows = [[p["name"], _pool_label(p), span(p["nodesAtMin"], p["maxSize"]), rate(p["onDemandUsdPerNodeHour"]),
                  rate(p["usdPerNodeHour"]), rate(p["usdPerGpuHour"]), money(p["monthlyUsdAtMin"]),
                  money(p["monthlyUsdAtMax"])] for p in section["pools"]]
    lines += text_table(["Pool", "Priced as", "Nodes", "On-demand/h", "$/node-hour", "$/GPU-hour", "Monthly at min",
                         "Monthly at max"], pool_rows, right=(2, 3, 4, 5, 6, 7))
    lines.append("")
    fixed_rows = [[f["label"], _quantity(f), _unit_price(f), money(f["monthlyUsdAtMin"]), money(f["monthlyUsdAtMax"]),
                   f["note"] if not f["included"] or f["usdPerUnit"] is None else ""] for f in section["fixed"]]
    t = section["totals"]
    fixed_rows.append(["Total", "", "", money(t["monthlyUsdAtMin"]), money(t["monthlyUsdAtMax"]),
                       f"${rate(t['hourlyUsdAtMin'])}/h to ${rate(t['hourlyUsdAtMax'])}/h"])
    lines += text_table(["Platform", "Quantity", "Price", "Monthly at min", "Monthly at max", ""], fixed_rows,
                        right=(3, 4))
    budget = _budget_line(section)
    if budget:
        lines.append(f"  {budget}")
    if section["teams"]:
        lines += ["", "  Team quotas, if fully used for a month"]
        lines += text_table(["Team", "Resource", "Quota", "Share", "$/unit-hour", "On-demand", "Spot"],
                            _team_rows(section), right=(2, 3, 4, 5, 6), indent="    ")
    lines += ["", "  Warnings:", *(f"    - {w}" for w in section["warnings"])] if section.get("warnings") else []
    lines += ["", "  Notes:", *(f"    - {n}" for n in section["notes"])]
    lines += ["  Not included:", *(f"    - {x}" for x in section["exclusions"])]
    lines += ["  Price sources:", *(f"    - {s['source']} ({s['asOf']})" for s in section["prices"]["sources"])]
    return "\n".join(lines)


def _team_rows(section: dict[str, Any]) -> list[list[str]]:
    rows = []
    for team in section["teams"]:
        for r in team["resources"]:
            rows.append([team["name"], r["resource"], count(r["quota"]), percent(r["share"]),
                         rate(r["onDemandUsdPerUnitHour"]), money(r["onDemandMonthlyUsd"]), money(r["spotMonthlyUsd"])])
        if len(team["resources"]) > 1:
            rows.append([team["name"], "total", "", "", "", money(team["onDemandMonthlyUsd"]),
                         money(team["spotMonthlyUsd"])])
    return rows


def markdown(section: dict[str, Any]) -> str:
    p, t = section["prices"], section["totals"]
    rows = [[f"{x['name']} ({_pool_label(x)}, {span(x['nodesAtMin'], x['maxSize'])} nodes)",
             money(x["monthlyUsdAtMin"]), money(x["monthlyUsdAtMax"])] for x in section["pools"]]
    included = [f for f in section["fixed"] if f["included"]]
    rows.append(["Platform (items below)",
                 money(sum(f["monthlyUsdAtMin"] or 0 for f in included)),
                 money(sum(f["monthlyUsdAtMax"] or 0 for f in included))])
    rows.append(["**Total**", f"**{money(t['monthlyUsdAtMin'])}**", f"**{money(t['monthlyUsdAtMax'])}**"])
    lines = [f"_{_heading(section)}_", "",
             *md_table([f"{section['currency']} per month", "At min size", "At max size"], rows, right=(1, 2))]
    budget = _budget_line(section)
    if budget:
        mark = "✅" if section["budget"]["withinBudget"] else "⚠️"
        lines += ["", f"{mark} **{budget}**"]
    lines += ["", *(f"⚠️ {w}" for w in section["warnings"])] if section.get("warnings") else []
    if t["unpriced"]:
        lines += ["", f"⚠️ No price known for {', '.join(t['unpriced'])}: left out of the totals."]
    lines += ["", "<details><summary>Platform items, team quotas and what the estimate leaves out</summary>", ""]
    lines += md_table(["Platform item", "Quantity", "Price", "At min", "At max"],
                      [[f["label"] + ("" if f["included"] else f" ({f['note']})"), _quantity(f), _unit_price(f),
                        money(f["monthlyUsdAtMin"]), money(f["monthlyUsdAtMax"])] for f in section["fixed"]],
                      right=(3, 4))
    if section["teams"]:
        lines += ["", *md_table(["Team", "Resource", "Quota", "Share of capacity", "On-demand/month", "Spot/month"],
                                [[r[0], short(r[1]) if r[1] != "total" else "total", *r[2:4], *r[5:]]
                                 for r in _team_rows(section)], right=(2, 3, 4, 5))]
    lines += ["", *(f"- {n}" for n in section["notes"])]
    lines += [f"- Not included: {'; '.join(section['exclusions'])}."]
    lines += ["- Sources: " + "; ".join(f"{s['source']} ({s['asOf']})" for s in p["sources"]) + "."]
    lines += ["", "</details>"]
    return "\n".join(lines)


SECTION = register(Section(NAME, TITLE, build, text, markdown, needs_platform=True))
