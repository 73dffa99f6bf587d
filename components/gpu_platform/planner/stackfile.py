"""Read Pulumi.yaml and a stack file the way the Pulumi CLI does, into the config map a program sees.

Pulumi hands a program every config value as a string under an `ns:key` name: objects and lists as
JSON, scalars as their text, keys without a namespace under the project's. Secrets (`secure:`) need
the stack's secrets provider, which an offline plan does not have: a secret config key (what
`pulumi config set --secret KEY` writes) gets a clearly fake stand-in value and is marked secret, so
the program reads it as a secret Output exactly as under `pulumi up`. A `secure:` value nested inside
a structured key (`--path`) is refused: the program keeps every secret in its own key.
YAML is read as YAML 1.2 like the CLI does (`on`/`yes` stay strings, dates stay text), within the limits of
facts/input_files.py (size, nesting, aliases, numbers, UTF-8). `aws:region` must name a region.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable, Sequence
from typing import Any, Optional

from gpu_platform.facts import input_files, syntax
from gpu_platform.planner import esc
from gpu_platform.planner.errors import PlannerError

DEFAULT_PROJECT = "gpu-platform"
REQUIRED_KEYS = ("aws:region",)  # the mocks answer for the cloud in this region
# What a stack file holds (pulumi/pulumi sdk/go/common/workspace/project.go, ProjectStack); the CLI ignores
# anything else, so a config key indented one level too little would silently be no config at all.
STACK_FILE_KEYS = ("config", "environment", "secretsprovider", "encryptedkey", "encryptionsalt")


@dataclass(frozen=True)
class Project:
    dir: Path
    name: str
    stack_config_dir: Path
    config: dict[str, str]  # project-level values from Pulumi.yaml, already namespaced
    program: Optional[Path] = None  # what runs: Pulumi.yaml's `main:` (a folder with __main__.py, or a file), else dir

    def stack_file(self, stack: str) -> Path:
        return self.stack_config_dir / f"Pulumi.{stack}.yaml"

    def stacks(self) -> list[str]:
        return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in self.stack_config_dir.glob("Pulumi.*.yaml"))

    def lock_file(self, stack: str) -> Path:
        """The stack's lock, beside the stack files."""
        return self.stack_config_dir / f"Pulumi.{stack}.lock.json"


@dataclass(frozen=True)
class StackConfig:
    stack: str
    path: Path
    config: dict[str, str]  # what pulumi.Config reads: `ns:key` -> string
    secret_keys: tuple[str, ...] = ()  # keys stored with `secure:` (their values here are stand-ins)

    def object(self, key: str) -> Any:
        """A structured config value, as `pulumi.Config().require_object` reads it (InputError if it is not JSON)."""
        return input_files.parse_json(self.config[key], f"{show_path(self.path)}: `{key}`")


def load_project(project_dir: Path) -> Project:
    path = project_dir / "Pulumi.yaml"
    data = _read_yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise PlannerError(f"{show_path(path)}: not a Pulumi project file (needs a `name:`)")
    name = data["name"]
    config_dir = project_dir / str(data.get("stackConfigDir") or ".")
    declared = data.get("config") or {}
    if not isinstance(declared, dict):
        raise PlannerError(f"{show_path(path)}: `config:` must be a mapping of config keys to values or declarations")
    defaults = {}
    for key, value in declared.items():
        if isinstance(value, dict) and not ({"value", "default"} & value.keys()):
            continue  # a typed declaration without a value: the stack must set it
        if isinstance(value, dict):
            value = value.get("value", value.get("default"))
        defaults[_namespaced(str(key), name)] = value
    problems = list(_secure_values(defaults, path))
    if problems:
        raise PlannerError(problems)
    return Project(project_dir, name, config_dir, {k: _to_config_string(v) for k, v in defaults.items()},
                   _program(project_dir, data.get("main"), path))


def _program(project_dir: Path, main: Any, path: Path) -> Path:
    """Pulumi.yaml's `main:`, the program's folder (holding __main__.py) or file relative to the project
    (https://www.pulumi.com/docs/iac/concepts/projects/project-file/); refused when it points nowhere, which
    would otherwise plan the project folder's program instead."""
    if main is None:
        return project_dir
    program = project_dir / str(main) if isinstance(main, str) and main.strip() else None
    if program is not None and (program.is_file() or (program / "__main__.py").is_file()):
        return program
    raise PlannerError(f"{show_path(path)}: `main: {main}` points nowhere: name the program's folder (holding "
                       f"__main__.py) or its .py file, relative to {show_path(project_dir)}, or remove `main:`")


def find_project_dir(*starts: Path) -> Path:
    """The first of `starts` (or a parent of one) that holds Pulumi.yaml."""
    for start in starts:
        for candidate in (start, *start.parents):
            if (candidate / "Pulumi.yaml").is_file():
                return candidate
    where = " or ".join(dict.fromkeys(str(s) for s in starts))
    raise PlannerError(f"no Pulumi.yaml in {where} or above: run from the Pulumi project or pass --project-dir")


def stack_name_for(path: Path) -> str:
    """`Pulumi.dev.yaml` -> `dev`; any other file name -> its stem."""
    name = path.name
    if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")) and name.count(".") >= 2:
        return name[len("Pulumi."):name.rindex(".")]
    return path.stem


def load_stack(project: Project, *, stack: str | None = None, path: Path | None = None,
               esc_values: Sequence[Path] = ()) -> StackConfig:
    """Load `--stack NAME` (from the project's stackConfigDir) or `--config FILE`, with the values of the
    Pulumi ESC environments it imports from `esc_values` (`--esc-values`) or the `esc` CLI (planner/esc.py)."""
    if path is None:
        if stack is None:
            raise PlannerError("give a stack name or a stack file")
        path = project.stack_file(stack)
        if not path.is_file():
            known = ", ".join(project.stacks()) or "none"
            raise PlannerError(f"{show_path(path)}: no such stack file (stacks here: {known})")
    stack = stack or stack_name_for(path)
    data = _read_yaml(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise PlannerError(f"{show_path(path)}: a stack file must be a YAML mapping with a top-level `config:`")
    unknown = [str(key) for key in data if key not in STACK_FILE_KEYS]
    if unknown:
        raise PlannerError([f"{show_path(path)}: unknown top-level key `{key}`: a stack file holds "
                            f"{', '.join(STACK_FILE_KEYS)}; config keys go under `config:`" for key in unknown])
    raw = data.get("config") or {}
    if not isinstance(raw, dict):
        raise PlannerError(f"{show_path(path)}: `config:` must be a mapping of `namespace:key: value`")
    values = {_namespaced(str(key), project.name): value for key, value in raw.items()}
    secrets = tuple(key for key, value in values.items() if _is_secure(value))
    # The stack file's own keys win over its environments' (as `pulumi config` shows them).
    values = {**_environment_config(data.get("environment"), esc_values, project.name, path), **values}
    values.update({key: stand_in(key) for key in secrets})
    problems = list(_secure_values(values, path))
    config = {**project.config, **{k: _to_config_string(v) for k, v in values.items()}}
    for key in REQUIRED_KEYS:
        if key not in config:
            problems.append(f"{show_path(path)}: missing config key `{key}` under `config:`")
    if "aws:region" in config:
        problems += [f"{show_path(path)}: {p}" for p in _region_problems(values.get("aws:region", config["aws:region"]))]
    if problems:
        raise PlannerError(problems)
    return StackConfig(stack, path, config, secrets)


def _environment_config(environment: Any, esc_values: Sequence[Path], project: str, path: Path) -> dict[str, Any]:
    """The `pulumiConfig` of the ESC environments the stack imports, namespaced like its own keys."""
    if not environment:
        if esc_values:
            raise PlannerError(f"{show_path(path)}: --esc-values gives Pulumi ESC values, but the stack file imports "
                               "no environment (`environment:`); leave the option out")
        return {}
    names = esc.imports_of(environment, show_path(path))
    opened = esc.stack_config(names, esc_values, show_path(path))
    return {_namespaced(str(key), project): value for key, value in opened.items()}


def stand_in(key: str) -> str:
    """The value an offline plan gives secret `key`: obviously not a real secret, never sent anywhere."""
    return f"offline-plan-stand-in-for-secret-{key}"


def _region_problems(region: Any) -> list[str]:
    """`aws:region` names a region: the program builds zone names, ARNs and endpoints from it."""
    if not isinstance(region, str):
        return [f"`aws:region`: must be a region name such as us-east-1, not {syntax.kind_of(region)}"]
    problem = syntax.region(region)
    return [f"`aws:region`: {problem}"] if problem else []


def _read_yaml(path: Path) -> Any:
    try:
        return input_files.read_yaml(path, show_path(path))
    except input_files.InputError as exc:
        raise PlannerError(str(exc)) from None


def _namespaced(key: str, project: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _to_config_string(value: Any) -> str:
    """How the CLI passes a value: structured as JSON, booleans lowercase, null as empty."""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _secure_values(values: dict[str, Any], path: Path) -> Iterable[str]:
    for key, value in values.items():
        for where in _find_secure(value, key):
            yield (f"{show_path(path)}: `{where}` is a secret (`secure:`) inside a structured value; keep each "
                   "secret in its own config key (`pulumi config set --secret KEY VALUE`) and refer to the key")


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


def _find_secure(value: Any, where: str) -> Iterable[str]:
    if isinstance(value, dict):
        if _is_secure(value):
            yield where
            return
        for key, item in value.items():
            yield from _find_secure(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _find_secure(item, f"{where}[{index}]")


def show_path(path: Path) -> str:
    """A path as the user typed it or relative to the working directory, never longer than needed."""
    try:
        return str(input_files.absolute(path).relative_to(Path.cwd()))
    except ValueError:
        return str(path)
