"""Lifecycle verdicts: where each pinned version stands in its support window on a given day.

Pure: what a stack pins (decisions/pinned.py), the as-of date and whether the environment is strict
(prod) give verdicts with a severity, a message naming the field to change (the stack file's, or in a
program of its own the argument that set it: `Fields`), the date that matters and, for EKS extended support,
the extra monthly cost. The rules (docs/lifecycle.md):
- past end of life (EKS extended support over, a GPU Operator line or a driver branch end of life), or a
  Kubernetes version EKS does not offer yet: an error in a strict environment, a warning elsewhere;
- EKS extended support: a warning with what it adds to the control plane's monthly bill;
- within `warn_days` (60) of the end of EKS standard support or of a driver branch's end of life: a
  warning with the date;
- a GPU Operator line in maintenance (NVIDIA released a newer one): a warning;
- a version the calendar does not know: a warning (its dates cannot be checked), an AMI release of an
  image type the calendar follows but from before its first era included.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Optional
from collections.abc import Iterator, Mapping

from gpu_platform.decisions.pinned import Pinned, PoolPin
from gpu_platform.facts import catalog
from gpu_platform.facts.field_path import NODE_POOLS
from gpu_platform.facts.lifecycle_calendar import (
    AMI_DRIVER_ERAS, EKS_KUBERNETES, OPERATOR_LINES, AmiDriverEra, DriverBranch, KubernetesRelease, OperatorLine,
    ami_driver_era, operator_line,
)

ERROR, WARNING = "error", "warning"
SEVERITIES = (ERROR, WARNING)
WARN_DAYS = 60
# Kubernetes support windows on EKS, and GPU Operator line and driver branch states.
STANDARD, EXTENDED, END_OF_LIFE, UNRELEASED, UNKNOWN = "standard", "extended", "end-of-life", "unreleased", "unknown"
SUPPORTED, DEPRECATED = "supported", "deprecated"
KUBERNETES, OPERATOR, DRIVER = "kubernetes", "gpu-operator", "driver"
KUBERNETES_FIELD = "cluster.kubernetesVersion"
OPERATOR_FIELD = "gpuOperator.chartVersion"
DRIVER_FIELD = "gpuOperator.driver.version"
AMI_FIELD = str(NODE_POOLS.each() / "ami.releaseVersion")
AMI_RELEASE = "ami.releaseVersion"  # a pool's own field, as a fix names it


@dataclass(frozen=True)
class Fields:
    """What a verdict names as the field that changes each pin: the stack file's (the default), or, in a
    program of its own, the argument or input that set it (policy/lifecycle_fields.py reads which)."""

    kubernetes: str = KUBERNETES_FIELD
    operator: str = OPERATOR_FIELD
    driver: str = DRIVER_FIELD
    amis: Mapping[str, str] = field(default_factory=dict)  # pool -> what pins its AMI release, else the stack file's

    def ami(self, pool: str) -> str:
        return self.amis.get(pool, AMI_FIELD)


STACK_FILE = Fields()


def _pin_newer(ami_field: str) -> str:
    """How a fix names a pool's AMI release field: the pool's own (`ami.releaseVersion`) in a stack file."""
    return f"pin a newer {AMI_RELEASE if ami_field == AMI_FIELD else ami_field}"


@dataclass(frozen=True)
class Verdict:
    severity: str  # error | warning
    kind: str  # kubernetes | gpu-operator | driver
    subject: str  # e.g. "Kubernetes 1.33", "GPU Operator v26.3", "driver R595 (pool a10g-spot)"
    field: str  # the field that changes it (Fields: the stack file's, or a program's argument)
    message: str
    date: Optional[date] = None  # the date the verdict is about
    monthly_usd: Optional[float] = None  # what it adds to the monthly bill (EKS extended support)


@dataclass(frozen=True)
class Standing:
    """One pinned version's place in the calendar, for the plan's table."""

    kind: str
    subject: str
    version: str
    status: str
    until: Optional[date]  # when the current status ends; None: not known or open-ended
    note: str
    confirmed: bool
    source: str
    checked: str


# --- Kubernetes on EKS ---

def kubernetes_window(version: Optional[str], as_of: date) -> str:
    release = EKS_KUBERNETES.get(version or "")
    if release is None:
        return UNKNOWN
    if as_of < release.eks_release:
        return UNRELEASED
    if as_of >= release.end_of_extended:
        return END_OF_LIFE
    return EXTENDED if as_of >= release.end_of_standard else STANDARD


def control_plane_price(version: Optional[str], as_of: date) -> catalog.Price:
    """The EKS control plane's hourly price on `as_of`: extended support past the end of standard support
    (also after the end of extended support: EKS then upgrades the control plane to the oldest version
    still in extended support), standard otherwise."""
    window = kubernetes_window(version, as_of)
    return catalog.EKS_CONTROL_PLANE_EXTENDED if window in (EXTENDED, END_OF_LIFE) else catalog.EKS_CONTROL_PLANE


def extended_support_surcharge() -> float:
    """What extended support adds to one control plane's monthly bill (USD)."""
    return (catalog.EKS_CONTROL_PLANE_EXTENDED.usd_per_hour - catalog.EKS_CONTROL_PLANE.usd_per_hour) \
        * catalog.HOURS_PER_MONTH


def next_minor(version: str) -> str:
    major, minor = version.split(".")[:2]
    return f"{major}.{int(minor) + 1}"


def _eol(strict: bool) -> str:
    return ERROR if strict else WARNING


def _on(day: date, release: object) -> str:
    """A date as shown in messages, marked when the calendar holds a forecast or a month."""
    return f"{day.isoformat()}{'' if getattr(release, 'confirmed', True) else ' (unconfirmed)'}"


def _days(as_of: date, day: date) -> str:
    n = (day - as_of).days
    return "today" if n == 0 else f"in {n} day{'s' if n != 1 else ''}"


def _kubernetes_verdicts(pinned: Pinned, as_of: date, strict: bool, warn_days: int,
                         fields: Fields) -> Iterator[Verdict]:
    version, fld = pinned.kubernetes, fields.kubernetes
    if version is None:
        return
    release = EKS_KUBERNETES.get(version)
    subject = f"Kubernetes {version}"
    if release is None:
        yield Verdict(WARNING, KUBERNETES, subject, fld,
                      f"Kubernetes {version} is not in the lifecycle calendar: its EKS support dates cannot be "
                      f"checked; use one of {', '.join(EKS_KUBERNETES)}")
        return
    window = kubernetes_window(version, as_of)
    price, extended = catalog.EKS_CONTROL_PLANE.usd_per_hour, catalog.EKS_CONTROL_PLANE_EXTENDED.usd_per_hour
    surcharge = extended_support_surcharge()
    cost = (f"the control plane costs ${extended:.2f}/h instead of ${price:.2f}/h, ${surcharge:,.2f} more a month"
            + ("" if pinned.cluster_created else " (billed to the adopted cluster's owner)"))
    if window == UNRELEASED:
        yield Verdict(_eol(strict), KUBERNETES, subject, fld,
                      f"Kubernetes {version} is not available on EKS on {as_of} (EKS release "
                      f"{_on(release.eks_release, release)}): EKS cannot create it yet; pin a released version",
                      release.eks_release)
    elif window == END_OF_LIFE:
        yield Verdict(_eol(strict), KUBERNETES, subject, fld,
                      f"Kubernetes {version} reached the end of EKS extended support on "
                      f"{_on(release.end_of_extended, release)}: EKS creates no clusters on it and upgrades "
                      f"existing control planes on its own, without the add-ons and node groups (billed at the "
                      f"extended-support rate, ${extended:.2f}/h); upgrade "
                      f"{fld} one minor at a time, next {next_minor(version)}",
                      release.end_of_extended, surcharge)
    elif window == EXTENDED:
        ends = release.end_of_extended
        soon = f" ({_days(as_of, ends)})" if (ends - as_of).days <= warn_days else ""
        yield Verdict(WARNING, KUBERNETES, subject, fld,
                      f"Kubernetes {version} is in EKS extended support on {as_of} (standard support ended "
                      f"{_on(release.end_of_standard, release)}): {cost}; extended support ends "
                      f"{_on(ends, release)}{soon}. Upgrade {fld} to {next_minor(version)}, one minor "
                      "at a time", release.end_of_standard, surcharge)
    elif (release.end_of_standard - as_of).days <= warn_days:
        ends = release.end_of_standard
        yield Verdict(WARNING, KUBERNETES, subject, fld,
                      f"Kubernetes {version} leaves EKS standard support on {_on(ends, release)} "
                      f"({_days(as_of, ends)}): from then {cost}, unless {fld} is upgraded to "
                      f"{next_minor(version)} first", ends, surcharge)


def _kubernetes_standing(pinned: Pinned, as_of: date) -> Optional[Standing]:
    version = pinned.kubernetes
    if version is None:
        return None
    release: Optional[KubernetesRelease] = EKS_KUBERNETES.get(version)
    window = kubernetes_window(version, as_of)
    if release is None:
        return Standing(KUBERNETES, "EKS Kubernetes", version, UNKNOWN, None, "not in the calendar", False, "", "")
    until = {UNRELEASED: release.eks_release, STANDARD: release.end_of_standard,
             EXTENDED: release.end_of_extended}.get(window)
    note = (f"EKS release {release.eks_release}, standard support to {release.end_of_standard}, extended to "
            f"{release.end_of_extended}" + (f"; {release.note}" if release.note else ""))
    return Standing(KUBERNETES, "EKS Kubernetes", version, window, until, note, release.confirmed, release.source,
                    release.checked)


# --- GPU Operator release lines ---

def operator_status(chart_version: Optional[str], as_of: date) -> tuple[str, Optional[OperatorLine], Optional[OperatorLine]]:
    """(status, the chart's line, the line that superseded it) on `as_of`, per NVIDIA's policy: the newest
    released line is supported, the one before it in maintenance (deprecated), every older one end of life."""
    line = OPERATOR_LINES.get(operator_line(chart_version or ""))
    if line is None:
        return UNKNOWN, None, None
    if as_of < line.released:
        return UNRELEASED, line, None
    released = sorted((o for o in OPERATOR_LINES.values() if o.released <= as_of), key=lambda o: o.released)
    newer = released[released.index(line) + 1:]
    status = SUPPORTED if not newer else DEPRECATED if len(newer) == 1 else END_OF_LIFE
    # end of life began when the second newer line came out; maintenance when the first did
    return status, line, (newer[0] if status == DEPRECATED else newer[1] if newer else None)


def _operator_verdicts(pinned: Pinned, as_of: date, strict: bool, fields: Fields) -> Iterator[Verdict]:
    chart, fld = pinned.operator_chart, fields.operator
    if chart is None:
        return
    status, line, since = operator_status(chart, as_of)
    lines = list(OPERATOR_LINES)
    if status == UNKNOWN:
        yield Verdict(WARNING, OPERATOR, f"GPU Operator {chart}", fld,
                      f"GPU Operator {chart} is not in the lifecycle calendar (release lines {', '.join(lines)}): "
                      "its support status cannot be checked")
    if line is None or since is None:  # unknown (said above), supported, or not released yet
        return
    if status == DEPRECATED:
        yield Verdict(WARNING, OPERATOR, f"GPU Operator {line.line}", fld,
                      f"GPU Operator {line.line} is in maintenance since {since.line} was released "
                      f"({_on(since.released, since)}): critical bug and CVE fixes only, end of life with the next "
                      f"release line. Move {fld} to {since.line}.x (NVIDIA supports upgrades to the next "
                      "line only)", since.released)
    elif status == END_OF_LIFE:
        following = lines[lines.index(line.line) + 1]
        yield Verdict(_eol(strict), OPERATOR, f"GPU Operator {line.line}", fld,
                      f"GPU Operator {line.line} reached end of life when {since.line} was released "
                      f"({_on(since.released, since)}): no fixes at all. Upgrade {fld} one release line "
                      f"at a time, next {following}.x", since.released)


def _operator_standing(pinned: Pinned, as_of: date) -> Optional[Standing]:
    chart = pinned.operator_chart
    if chart is None:
        return None
    status, line, since = operator_status(chart, as_of)
    if line is None:
        return Standing(OPERATOR, "GPU Operator", chart, status, None, "not in the calendar", False, "", "")
    note = f"{line.line} released {line.released}" + (f"; {since.line} released {since.released}" if since else "")
    return Standing(OPERATOR, "GPU Operator", chart, status, None, note + (f" ({line.note})" if line.note else ""),
                    line.confirmed, line.source, line.checked)


# --- driver branches ---

def driver_status(branch: str, as_of: date) -> tuple[str, Optional[DriverBranch]]:
    info = catalog.DRIVER_BRANCHES.get(branch)
    if info is None:
        return UNKNOWN, None
    return (END_OF_LIFE if as_of > info.eol else SUPPORTED), info


@dataclass(frozen=True)
class PoolDriver:
    """The driver branches one pool's AMI release carries for its instance types."""

    pool: str
    certain: tuple[str, ...]  # branches its nodes run
    possible: tuple[str, ...]  # branches they may run (the AMI picks per instance; how is not documented)
    era: Optional[AmiDriverEra]


def pool_driver(pool: PoolPin) -> PoolDriver:
    era = ami_driver_era(pool.ami_type or "", pool.release_version or "") if not pool.custom_image else None
    if era is None:
        return PoolDriver(pool.name, (), (), None)
    chosen = {f: era.branch_for(f) for f in pool.families or ("",)}
    known = [b for b in chosen.values() if b]
    unknown = [f for f, b in chosen.items() if not b]
    return PoolDriver(pool.name, tuple(dict.fromkeys(known)), era.branches if unknown else (), era)


def _longest_supported(as_of: date) -> Optional[DriverBranch]:
    live = [b for b in catalog.DRIVER_BRANCHES.values() if b.eol >= as_of and b.kind != "new-feature"]
    return max(live, key=lambda b: b.eol) if live else None


def _driver_sources(pinned: Pinned, fields: Fields) -> Iterator[tuple[str, str, str, bool]]:
    """(branch, where, field, certain) for every driver the stack runs."""
    if pinned.operator_driver:
        yield catalog.driver_branch(pinned.operator_driver), "the GPU Operator's driver", fields.driver, True
    for pd in map(pool_driver, pinned.pools):
        for branch in pd.certain:
            yield branch, f"pool {pd.pool}", fields.ami(pd.pool), True
        for branch in pd.possible:
            if branch not in pd.certain:
                yield branch, f"pool {pd.pool}", fields.ami(pd.pool), False


def _driver_verdicts(pinned: Pinned, as_of: date, strict: bool, warn_days: int, fields: Fields) -> Iterator[Verdict]:
    groups: dict[tuple[str, str, bool], list[str]] = {}
    for branch, where, fld, certain in _driver_sources(pinned, fields):
        groups.setdefault((branch, fld, certain), []).append(where)
    best = _longest_supported(as_of)
    advice = f" R{best.branch} ({best.kind}) is supported until {best.eol}." if best else ""
    for (branch, fld, certain), wheres in groups.items():
        status, info = driver_status(branch, as_of)
        verb = ("run" if len(wheres) > 1 else "runs") if certain else "may run"
        runs = f"{' and '.join(wheres)} {verb} R{branch}"
        fix = (f"set {fld} to a supported branch on the chart's list" if fld == fields.driver
               else f"{_pin_newer(fld)} whose driver branch is supported")
        subject = f"driver R{branch} ({', '.join(wheres)})"
        if info is None:
            yield Verdict(WARNING, DRIVER, subject, fld,
                          f"{runs}, a branch the lifecycle calendar does not know: its end of life cannot be checked")
        elif status == END_OF_LIFE:
            severity = _eol(strict) if certain else WARNING
            yield Verdict(severity, DRIVER, subject, fld,
                          f"{runs}, which reached end of life on {_on(info.eol, info)}: no more bug or security "
                          f"fixes; {fix}.{advice}", info.eol)
        elif (info.eol - as_of).days <= warn_days:
            yield Verdict(WARNING, DRIVER, subject, fld,
                          f"{runs}, which reaches end of life on {_on(info.eol, info)} ({_days(as_of, info.eol)}); "
                          f"{fix} before then.{advice}", info.eol)


def _unknown_ami_verdicts(pinned: Pinned, fields: Fields) -> Iterator[Verdict]:
    """An AMI release of an image type the calendar follows, but older than its first era: the driver it
    carries is unknown, so its end of life cannot be checked."""
    for pool in pinned.pools:
        eras = [e for e in AMI_DRIVER_ERAS if e.ami_type == pool.ami_type]
        if pool.custom_image or not eras or pool_driver(pool).era is not None:
            continue
        first = min(e.first_release for e in eras)
        release = pool.release_version or "(the latest, unpinned)"
        yield Verdict(WARNING, DRIVER, f"AMI release {release} (pool {pool.name})", fields.ami(pool.name),
                      f"pool {pool.name} pins {pool.ami_type} release {release}, which the lifecycle calendar does "
                      f"not know (its releases start {first.isoformat()}): the driver branch it carries and that "
                      f"branch's end of life cannot be checked; {_pin_newer(fields.ami(pool.name))}")


def _driver_standings(pinned: Pinned, as_of: date) -> Iterator[Standing]:
    if pinned.operator_driver:
        branch = catalog.driver_branch(pinned.operator_driver)
        yield _branch_standing("operator driver", pinned.operator_driver, branch, as_of, "")
    for pool in pinned.pools:
        if pool.custom_image:
            continue
        pd = pool_driver(pool)
        subject = f"AMI driver, pool {pool.name}"
        if pd.era is None:
            yield Standing(DRIVER, subject, pool.release_version or "", UNKNOWN, None,
                           f"{pool.ami_type} release not in the calendar", False, "", "")
            continue
        branches = tuple(dict.fromkeys((*pd.certain, *pd.possible)))
        for branch in branches:
            maybe = "" if branch in pd.certain else "may run this branch (chosen per instance type at boot); "
            yield _branch_standing(subject, pool.release_version or "", branch, as_of, maybe, pd.era)


def _branch_standing(subject: str, version: str, branch: str, as_of: date, prefix: str,
                     era: Optional[AmiDriverEra] = None) -> Standing:
    status, info = driver_status(branch, as_of)
    if info is None:
        return Standing(DRIVER, subject, version, UNKNOWN, None, f"{prefix}R{branch} not in the calendar", False, "", "")
    note = f"{prefix}R{branch} {info.kind}, end of life {info.eol}"
    confirmed = info.confirmed and (era is None or era.confirmed)
    source = info.source if era is None else f"{era.source}; {info.source}"
    return Standing(DRIVER, subject, version, status, info.eol if status == SUPPORTED else None, note, confirmed,
                    source, info.checked)


# --- everything ---

def verdicts(pinned: Pinned, as_of: date, strict: bool, warn_days: int = WARN_DAYS,
             fields: Fields = STACK_FILE) -> list[Verdict]:
    """Every verdict for what a stack pins on `as_of`, errors first. `strict`: past end of life is an error
    (prod), not a warning; `fields`: how messages name what to change."""
    found = [*_kubernetes_verdicts(pinned, as_of, strict, warn_days, fields), *_operator_verdicts(pinned, as_of, strict, fields),
             *_driver_verdicts(pinned, as_of, strict, warn_days, fields), *_unknown_ami_verdicts(pinned, fields)]
    return sorted(found, key=lambda v: SEVERITIES.index(v.severity))


def standings(pinned: Pinned, as_of: date) -> list[Standing]:
    rows = [_kubernetes_standing(pinned, as_of), _operator_standing(pinned, as_of), *_driver_standings(pinned, as_of)]
    return [r for r in rows if r is not None]
