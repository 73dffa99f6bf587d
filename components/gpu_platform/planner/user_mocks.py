"""`--mocks FILE`: the user's answers for invokes the offline planner does not know.

The file (JSON, or YAML 1.2 for a .yaml/.yml name, read within facts/input_files.py's limits) maps an
invoke token to its result, or to a list of `{args, result}` entries tried in order: the first whose `args`
all equal the call's arguments answers
(an entry without `args` answers any call). Results use the provider's camelCase wire names (`imageId`,
not `image_id`): the SDK silently drops keys it does not know. A user's answer wins over the planner's own.

    aws:ec2/getAmi:getAmi:
      - args: {owners: [amazon], mostRecent: true}
        result: {id: ami-0abc, imageId: ami-0abc, architecture: x86_64}
    aws:ssm/getParameter:getParameter:
      result: {name: /my/param, value: "42", type: String}
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from collections.abc import Mapping

from gpu_platform.facts import input_files
from gpu_platform.planner.errors import PlannerError

SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")


@dataclass(frozen=True)
class Answer:
    args: Optional[dict[str, Any]]  # None: any call
    result: dict[str, Any]

    def matches(self, call_args: Mapping[str, Any]) -> bool:
        return self.args is None or all(k in call_args and call_args[k] == v for k, v in self.args.items())


Answers = dict[str, list[Answer]]


def load(path: Path) -> Answers:
    """The answers in `path`; PlannerError (exit 2) naming the entry when the file is not usable."""
    where = f"--mocks {path}"
    read = input_files.read_yaml if path.suffix in (".yaml", ".yml") else input_files.read_json
    try:
        data = read(path, where)
    except input_files.InputError as exc:
        raise PlannerError(str(exc)) from None
    if not isinstance(data, dict):
        raise PlannerError(f"{where}: must map invoke tokens to results, e.g. {{\"aws:ec2/getAmi:getAmi\": {{...}}}}")
    return {str(token): _entries(spec, f"{where}: {token}") for token, spec in data.items()}


def answer(answers: Answers, token: str, call_args: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """The first matching result for `token`, or None."""
    return next((a.result for a in answers.get(token, ()) if a.matches(call_args)), None)


def _entries(spec: Any, where: str) -> list[Answer]:
    if isinstance(spec, dict) and "result" in spec and set(spec) <= {"args", "result"}:
        spec = [spec]
    if not isinstance(spec, list):
        return [Answer(None, _result(spec, where))]
    out = []
    for i, entry in enumerate(spec):
        if not isinstance(entry, dict) or "result" not in entry or not set(entry) <= {"args", "result"}:
            raise PlannerError(f"{where}[{i}]: an entry is {{args: {{...}}, result: {{...}}}} (args optional)")
        args = entry.get("args")
        if args is not None and not isinstance(args, dict):
            raise PlannerError(f"{where}[{i}].args: must be a mapping of argument names to values")
        out.append(Answer(args, _result(entry["result"], f"{where}[{i}].result")))
    return out


def _result(result: Any, where: str) -> dict[str, Any]:
    if not isinstance(result, dict):
        raise PlannerError(f"{where}: a result is a mapping of output names to values")
    snake = [k for k in result if isinstance(k, str) and SNAKE.match(k)]
    if snake:
        fixes = ", ".join(f"{k} -> {_camel(k)}" for k in snake)
        raise PlannerError(f"{where}: results use camelCase wire names ({fixes}); snake_case keys would reach "
                           "the program as None")
    return result


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


def failed_message(path: Optional[Path], tokens: list[str], exc: BaseException) -> str:
    """The program failed after the user's answers reached it: most often an answer of the wrong type (a
    number where the provider returns a string, a string where it returns a list), which the SDK only
    notices deep inside the program. The answers are named; the SDK's words say what it expected."""
    named = ", ".join(dict.fromkeys(tokens))
    detail = " ".join(str(exc).split())[:300]
    return (f"--mocks {path}: the program failed after the answer(s) for {named} reached it ({type(exc).__name__}: "
            f"{detail}): give each result the types the provider returns (strings, lists and objects as in the "
            "provider's API reference, camelCase keys)")
