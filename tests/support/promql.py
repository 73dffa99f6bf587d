"""promtool on a dashboard's or report's PromQL: each query as a recording rule of one group, so promtool
parses every expression (a panel query has no rule file of its own)."""
from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import yaml


def check_queries(promtool: str, tmp_path: Path, exprs: Sequence[str], group: str = "queries") -> None:
    """Fail unless promtool accepts every expression."""
    rules = [{"record": f"{group.replace('-', '_')}:query_{i}", "expr": e} for i, e in enumerate(exprs)]
    path = tmp_path / f"{group}.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": group, "rules": rules}]}))
    result = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
