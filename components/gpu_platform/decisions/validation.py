"""The stack file, validated whole: the models, every spec rule, then the rules that need a decision.

`parse_platform` is the one call the program and the planner share. It reads the object into the models
(spec/parse.py), runs the rules decidable from the file and the facts (spec/rules.py), and then the rules
that can only be checked above a decision: each team's datasets claim against its storage quota (which
teams get a claim) and the paths of its S3 link (the data repository associations; the Datasets component
checks them too), team quotas against what the pools provide at max size (capacity), Kueue's nominal quotas
placed on the pools (queueing), and CUDA minimums against the drivers of the pools they reach (cuda). Every
problem is reported at once, each naming its field.
"""
from __future__ import annotations

import json
from datetime import date
from typing import Any
from collections.abc import Iterator, Mapping, Sequence

from gpu_platform.decisions.cuda import min_cuda_rules
from gpu_platform.decisions.capacity import platform_capacity, team_quota_totals
from gpu_platform.decisions.datasets import SHARED_CLAIM_SIZE, associations, claim_size, claim_teams, claims_per_team
from gpu_platform.decisions.usage import usage_report_rules
from gpu_platform.decisions.queueing import queueing_rules
from gpu_platform.decisions.serving import serving_rules
from gpu_platform.facts import names, syntax
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.models import FsxLustreSpec, PlatformSpec, quantity_value
from gpu_platform.spec.parse import read_models
from gpu_platform.spec.field_path import TEAMS, FieldPath, Problem
from gpu_platform.spec.rules import check, named_zones, region_rules
from gpu_platform.spec.rules_teams import RESERVED_NAMESPACES, mig_slice_rules, name_rules, role_arn_rules

DATA_REPOSITORY = FieldPath.of("datasets.fsxLustre.dataRepository")  # the stack file's S3 link


def parse_platform(data: Any, today: date | None = None, *, region: Any = None) -> PlatformSpec:
    """Validate the stack file's object; raise SpecError listing every problem with its field path. With the
    stack's `region` (`aws:region`), the region and every zone the file names are checked against it.

    Without `today`, an object `judged` validated in this process (the planner's, on its `--as-of` day)
    is that spec: the program the planner runs does not validate the file a second time."""
    if today is None and _judged is not None and _judged[0] == _key(data, region):
        return _judged[1]
    spec = read_models(data)
    found = [*region_rules(region, named_zones(spec)), *rules(spec, today or date.today())]
    problems = [f"{path}: {msg}" for path, msg in found]
    if problems:
        raise SpecError(problems)
    return spec


_judged: tuple[str, PlatformSpec] | None = None


def judged(data: Any, today: date, *, region: Any = None) -> PlatformSpec:
    """`parse_platform` on the day a plan is judged; the spec is kept for the program that plan runs."""
    global _judged
    spec = parse_platform(data, today, region=region)
    _judged = (_key(data, region), spec)
    return spec


def _key(data: Any, region: Any) -> str:
    return json.dumps([data, region], sort_keys=True, default=repr)


def rules(spec: PlatformSpec, today: date) -> Iterator[Problem]:
    findings = check(spec, today)
    yield from findings.problems
    yield from _claim_quota_rules(spec)
    yield from usage_report_rules(spec.monitoring)
    if spec.datasets.fsx_lustre is not None:
        yield from link_path_problems(spec.datasets.fsx_lustre, [t.name for t in claim_teams(spec)])
    if findings.pools_valid:  # capacity is only meaningful once every pool is valid
        yield from _team_rules(spec)
        yield from queueing_rules(spec)
        yield from min_cuda_rules(spec)
        yield from serving_rules(spec)


def _claim_quota_rules(spec: PlatformSpec) -> Iterator[Problem]:
    """Each team's datasets claim (and its model-cache claim) counts against the team's storage quota."""
    cache, fsx = spec.model_cache, spec.datasets.fsx_lustre
    if fsx is None:  # no datasets file system, no claims
        return
    for team in claim_teams(spec):
        at = TEAMS.index(spec.teams.index(team)) / "quota"
        claims = claims_per_team(fsx) + int(cache.enabled)
        sizes = [("the datasets claim", claim_size(fsx))]
        if fsx.shared:
            sizes.append(("the shared area's claim", SHARED_CLAIM_SIZE))
        if cache.enabled:
            sizes.append(("the model-cache claim", cache.pvc_size))
        needed = sum(quantity_value(size) for _, size in sizes)
        if team.quota.persistent_volume_claims < claims:
            yield (at / "persistentVolumeClaims", f"must be >= {claims}: the team's datasets "
                   f"claim{'s count' if claims > 1 else ' counts'} against it")
        if quantity_value(team.quota.storage) < needed:
            yield (at / "storage", f"must be >= {needed / 2**30:g}Gi: "
                   f"{_listed([f'{what} ({size})' for what, size in sizes])} count against it")


def link_path_problems(fsx: FsxLustreSpec, teams: Sequence[str],
                       at: FieldPath = DATA_REPOSITORY) -> Iterator[Problem]:
    """(field, message) for each association whose paths FSx would refuse: the team's directory (or the shared
    area) appended to `fileSystemPath` and to `s3Path` may pass FSx's length limits though both fields fit
    (facts/syntax.py), which leaves the file system built and the link failing at apply."""
    for link in associations(fsx, teams):
        whose = "the shared area's link" if link.key == "shared" else f"the link of team {link.key!r}"
        for field, problem in (("fileSystemPath", syntax.fsx_file_system_path(link.file_system_path)),
                               ("s3Path", syntax.fsx_data_repository_path(link.s3_path))):
            if problem:
                yield at / field, f"{whose}: {problem}; shorten {field}"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _team_rules(spec: PlatformSpec) -> Iterator[Problem]:
    capacity = platform_capacity(spec).total
    offered = sorted(r.removeprefix(names.MIG_RESOURCE_PREFIX) for r in capacity if r.startswith(names.MIG_RESOURCE_PREFIX))
    # The operator's and Prometheus's namespaces are configurable: reserve the ones this stack uses too.
    reserved = (*RESERVED_NAMESPACES, spec.gpu_operator.namespace, spec.monitoring.prometheus.namespace)
    for i, team in enumerate(spec.teams):
        at = TEAMS.index(i)
        yield from name_rules(at, team, reserved)
        yield from mig_slice_rules(at, team.quota, offered)
        yield from role_arn_rules(at / "access", team.access)
    yield from _overcommit_rules(spec, capacity)


def _overcommit_rules(spec: PlatformSpec, capacity: Mapping[str, int]) -> Iterator[Problem]:
    ratio = spec.quota_overcommit_ratio
    for res, asked in team_quota_totals(spec).items():
        offered = capacity.get(res, 0)
        if not offered and res.startswith(names.MIG_RESOURCE_PREFIX):
            continue  # reported above: no pool offers that profile
        if asked > offered * ratio:
            yield (TEAMS, f"team quotas ask for {asked} {res} but the pools provide {offered} at max size "
                   f"(quotaOvercommitRatio {ratio:g} allows {int(offered * ratio)}); raise maxSize or the ratio, or lower quotas")
