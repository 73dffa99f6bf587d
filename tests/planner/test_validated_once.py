"""A plan validates the stack file once: the planner parses it, the program it runs builds from that spec,
and each component gets its part as validated models, so each pool's rules run once per pool."""
from __future__ import annotations

import collections
import sys
from typing import Any
from collections.abc import Callable

import pytest

from gpu_platform.planner.cli import main
from tests.support.stacks import AS_OF, ROOT, spec_of


def _count_calls(monkeypatch, counts: collections.Counter, module: str, name: str,
                 key: Callable[..., str] | None = None) -> None:
    """Count calls of `module.name` wherever a gpu_platform module bound it (`from x import name` included)."""
    __import__(module)
    original = getattr(sys.modules[module], name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[key(*args) if key else name] += 1
        return original(*args, **kwargs)

    for loaded in [m for n, m in list(sys.modules.items()) if n.startswith("gpu_platform") and m is not None]:
        if getattr(loaded, name, None) is original:
            monkeypatch.setattr(loaded, name, counted)


@pytest.mark.parametrize("stack", ["dev", "prod", "karpenter", "training-blackwell"])
def test_a_plan_parses_the_platform_once_and_runs_each_pool_rule_once_per_pool(monkeypatch, capsys, tmp_path, stack):
    import gpu_platform.resources.gpu_operator  # noqa: F401 bind every name before counting
    import gpu_platform.resources.kueue  # noqa: F401
    import gpu_platform.resources.pool_args  # noqa: F401

    pools = len(spec_of(stack).node_pools)
    counts: collections.Counter = collections.Counter()
    _count_calls(monkeypatch, counts, "gpu_platform.spec.parse", "read_models")
    _count_calls(monkeypatch, counts, "gpu_platform.spec.parse", "read_part", key=lambda model, *a: model.__name__)
    _count_calls(monkeypatch, counts, "gpu_platform.spec.rules", "pool_rules")
    _count_calls(monkeypatch, counts, "gpu_platform.spec.rules", "sharing_rules")
    code = main(["plan", "--config", str(ROOT / "stacks" / f"Pulumi.{stack}.yaml"), "--as-of", AS_OF,
                 "--json", str(tmp_path / "plan.json")])
    assert code == 0, capsys.readouterr().err
    assert counts["read_models"] == 1
    assert counts["pool_rules"] == pools and counts["sharing_rules"] == pools, counts
    # GpuPlatform hands every part over as the models parse_platform read: none is read again from a dict.
    parts_read = {k for k in counts if k.endswith("Spec")}
    assert parts_read == {"PlatformSpec"} and counts["PlatformSpec"] == 1, counts
