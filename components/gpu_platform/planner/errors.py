"""The planner's one error type: invalid input the user can fix, reported as exit 2."""
from __future__ import annotations


class PlannerError(Exception):
    """Input the planner cannot plan; `problems` holds one line per problem, each naming where to look."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))
