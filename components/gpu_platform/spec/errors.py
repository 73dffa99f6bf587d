"""The one error an invalid stack file raises, wherever it is found."""
from __future__ import annotations


class SpecError(ValueError):
    """The stack file is invalid; `problems` holds one `path: message` line per problem."""

    def __init__(self, problems: list[str], subject: str = "gpu-platform:platform"):
        """`subject`: what was invalid, as its writer knows it (the stack file's config key, by default)."""
        self.problems = problems
        super().__init__(f"invalid {subject}:\n" + "\n".join(f"  - {p}" for p in problems))
