"""The one error an invalid stack file raises, wherever it is found."""
from __future__ import annotations


class SpecError(ValueError):
    """The stack file is invalid; `problems` holds one `path: message` line per problem."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid gpu-platform:platform:\n" + "\n".join(f"  - {p}" for p in problems))
