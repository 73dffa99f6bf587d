"""The Pulumi project a command works on, and whether its stack file is a gpu-platform stack file.

Everything is found from the user's side, never from where gpu-platform is installed:
- the project: `--project-dir`, else the nearest `Pulumi.yaml` at or above the `--config` file, else at or
  above the working directory (as the Pulumi CLI finds it);
- the default lock: `Pulumi.<stack>.lock.json` in the project's `stackConfigDir`, beside the stack files;
- the policy pack's folder, against which a relative `lockFile` is read: `--policy-pack`, else
  `<project>/policies` (what `pulumi preview --policy-pack policies` runs from the project).
A stack file is a gpu-platform stack file when it sets the program's platform object, `<project>:platform`
(what `pulumi.Config().require_object("platform")` reads). Then it is validated before the program runs and
every section is computed; without it the program is planned with the sections that read resources only.
"""
from __future__ import annotations

import datetime
import sys
from pathlib import Path
from typing import Any, Optional

from gpu_platform.facts import input_files
from gpu_platform.planner import stackfile
from gpu_platform.planner.errors import PlannerError
from gpu_platform.spec.errors import COMPONENT_ARGUMENTS

PLATFORM_KEY = "platform"
PACK_FOLDER = "policies"


def find(project_dir: Optional[Path], config: Optional[Path] = None) -> stackfile.Project:
    """The project: `project_dir`, else found from the stack file's folder, else from the working directory."""
    if project_dir is not None:
        return stackfile.load_project(input_files.absolute(project_dir))
    starts = ([input_files.absolute(config).parent] if config is not None else []) + [Path.cwd()]
    return stackfile.load_project(stackfile.find_project_dir(*starts))


def find_optional(project_dir: Optional[Path]) -> Optional[stackfile.Project]:
    """The project here (or `project_dir`), None when there is none (commands that only read files)."""
    try:
        return find(project_dir)
    except PlannerError:
        if project_dir is not None:
            raise
        return None


def platform_key(project: stackfile.Project) -> str:
    return f"{project.name}:{PLATFORM_KEY}"


def pack_dir(project: Optional[stackfile.Project], given: Optional[Path]) -> Path:
    if given is not None:
        return input_files.absolute(given)
    return (project.dir if project else Path.cwd()) / PACK_FOLDER


def prevalidate(project: stackfile.Project, stack: stackfile.StackConfig,
                as_of: Optional[datetime.date] = None) -> tuple[Any, Any]:
    """(platform object, validated spec), or (None, None) when the stack file sets no platform object.
    An invalid platform object stops here with every problem listed (exit 2)."""
    key = platform_key(project)
    if key not in stack.config:
        return None, None
    try:
        platform = stack.object(key)
    except input_files.InputError as exc:
        raise PlannerError(str(exc)) from None
    from gpu_platform.decisions.validation import judged

    try:
        return platform, judged(platform, as_of or datetime.date.today(), region=stack.config.get("aws:region"))
    except ValueError as exc:
        raise_spec_error(exc, stack.path)
        raise


def left_out_note(project: stackfile.Project, stack: stackfile.StackConfig, names: list[str]) -> str:
    """The one line a plan of a program without the platform object prints."""
    listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)
    return (f"note: {stackfile.show_path(stack.path)} sets no `{platform_key(project)}`, so it is not a gpu-platform "
            f"stack file: the {listed} sections are left out (they are computed from that object); the resources "
            "and the policy verdict are shown")


def raise_spec_error(exc: BaseException, stack_path: Path, program_at: str = "") -> None:
    """A SpecError (a ValueError carrying `problems`) anywhere in the cause chain is invalid input, and so is
    config the program requires that is missing or of the wrong type (pulumi.Config's own errors). A
    component's refused arguments are the program's (` at __main__.py:12`: `program_at`), not the stack file's."""
    sdk = sys.modules.get("pulumi.config")  # loaded when the program ran: only then can it raise these
    config_errors = (sdk.ConfigMissingError, sdk.ConfigTypeError) if sdk else ()
    seen: BaseException | None = exc
    while seen is not None:
        problems = getattr(seen, "problems", None)
        if isinstance(seen, ValueError) and isinstance(problems, list) and problems:
            where = (f"the program{program_at}" if getattr(seen, "subject", None) == COMPONENT_ARGUMENTS
                     else stackfile.show_path(stack_path))
            raise PlannerError([f"{where}: {p}" for p in problems]) from None
        if config_errors and isinstance(seen, config_errors):
            message = " ".join(str(seen).split())  # one line: the SDK's message spans two
            raise PlannerError(f"{stackfile.show_path(stack_path)}: `{seen.key}`: {message}") from None
        seen = seen.__cause__ or seen.__context__
