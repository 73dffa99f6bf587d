"""The one error an invalid stack file raises, wherever it is found."""
from __future__ import annotations


COMPONENT_ARGUMENTS = "component arguments"  # the subject of a component's refusal: a program's, not a file's
PLATFORM_KEY = "gpu-platform:platform"  # the stack file's platform object, as a problem names the object itself


class SpecError(ValueError):
    """The stack file is invalid; `problems` holds one `path: message` line per problem."""

    def __init__(self, problems: list[str], subject: str = PLATFORM_KEY):
        """`subject`: what was invalid, as its writer knows it (the stack file's config key, by default)."""
        self.problems = problems
        self.subject = subject
        super().__init__(f"invalid {subject}:\n" + "\n".join(f"  - {p}" for p in problems))
