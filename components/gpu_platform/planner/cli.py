"""The `gpu-platform` command.

  gpu-platform plan (--stack NAME | --config FILE) [--json FILE] [--out DIR] [--policy-config FILE]
                    [--policy-pack DIR] [--lock FILE] [--mocks FILE] [--format text|markdown]
                    [--as-of YYYY-MM-DD] [--project-dir DIR] [--esc-values FILE]...
  gpu-platform diff BASE.json HEAD.json [--format text|markdown|json]     (planner/diff.py)
  gpu-platform check-preview FILE [--lock FILE] [--environment ENV] [--guard-type TYPE]...
                                                                    (planner/preview_gate.py)
  gpu-platform lock (--stack NAME | --config FILE | --plan JSON) [--out FILE]   (planner/lock.py)
  gpu-platform upgrade-check BASE.json HEAD.json [--format text|markdown]  (planner/upgrade_check.py)
  gpu-platform usage-report --from FILE [--month YYYY-MM] [--format text|csv]  (planner/usage_report_cmd.py)

The project is found from the user's side (planner/project.py), never from where gpu-platform is installed.
Exit codes: 0 plan is clean, 1 mandatory policy violations, 2 invalid input (stack file, options, or a
version past end of life in prod on the as-of date: the plan is still printed), 3 the program itself
failed (a bug, or an invoke the offline planner cannot answer).
Input problems print one line each, never a traceback; `--debug` shows the traceback of a failure.
More subcommands plug in through COMMAND_MODULES: each module has `add_command(subparsers)` that
sets `run=<function(args) -> int>` as the parser's default.
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import sys
import traceback
from pathlib import Path
from typing import Any, Optional
from collections.abc import Sequence

from gpu_platform.facts.input_files import InputError
from gpu_platform.planner import project as projects
from gpu_platform.planner import stackfile
from gpu_platform.planner.errors import PlannerError
from gpu_platform.planner.process import ends_with_command

EXIT_OK, EXIT_VIOLATIONS, EXIT_INVALID, EXIT_FAILED = 0, 1, 2, 3
# What the `program` extra installs (pyproject.toml), by import name: planning needs it, the policy pack
# (gpu-platform without extras) does not.
PROGRAM_EXTRA_MODULES = ("pulumi_aws", "pulumi_kubernetes", "jsonschema", "pydantic")
PLANNER_DIR = Path(__file__).resolve().parent  # the planner's own frames are left out of program errors

# Modules adding subcommands (e.g. "gpu_platform.planner.diff"); each defines add_command(subparsers).
COMMAND_MODULES: list[str] = ["gpu_platform.planner.diff", "gpu_platform.planner.preview_gate", "gpu_platform.planner.lock",
                              "gpu_platform.planner.upgrade_check", "gpu_platform.planner.usage_report_cmd"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    if argv is None:  # the command line: this process ends with the command
        ends_with_command()  # no cyclic collection of the run's objects, during it or at exit (planner/process.py)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help(sys.stderr)
        return EXIT_INVALID
    try:
        return args.run(args)
    except PlannerError as exc:
        _problems(exc.problems)
        return EXIT_INVALID
    except InputError as exc:  # a file read below the planner (facts/input_files.py): named in the message
        _problems([str(exc)])
        return EXIT_INVALID
    except Exception as exc:  # noqa: BLE001 a bug of ours: one clear line, the traceback on request
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        if missing and missing.split(".")[0] in PROGRAM_EXTRA_MODULES:
            print(f"error: gpu-platform is installed without its `program` extra (no module {missing!r}), which "
                  "planning a program needs: pip install 'gpu-platform[program]'", file=sys.stderr)
            return EXIT_FAILED
        print(f"error: internal error in gpu-platform: {type(exc).__name__}: {exc}", file=sys.stderr)
        _traceback_hint(exc, getattr(args, "debug", False))
        return EXIT_FAILED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpu-platform", description="Plan and check the GPU platform offline, without cloud credentials.")
    parser.add_argument("--version", action=_Version, help="print gpu-platform's version and exit")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_plan(commands)
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_command(commands)
    return parser


class _Version(argparse.Action):
    """`--version`: the installed package's version, read only when asked (metadata costs every other run)."""

    def __init__(self, option_strings: list[str], dest: str, help: Optional[str] = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        import gpu_platform

        print(f"gpu-platform {gpu_platform.__version__}")  # on stdout, as argparse's own version action
        parser.exit()


def _add_plan(commands: Any) -> None:
    p = commands.add_parser(
        "plan", help="show what a stack would create, its policy verdict and extra tables",
        description="Run the program against Pulumi's mock engine and print the plan.")
    add_stack_options(p)
    p.add_argument("--json", metavar="FILE", type=Path, help="write the plan as JSON")
    p.add_argument("--out", metavar="DIR", type=Path, help="write Kubernetes manifests and Helm values here")
    add_policy_options(p)
    p.add_argument("--lock", metavar="FILE", type=Path,
                   help="the lock to hold the plan to (beats the policy config; default: the config's lock, else "
                        "Pulumi.<stack>.lock.json beside the stack files)")
    p.add_argument("--format", choices=("text", "markdown"), default="text", help="how to print the plan")
    p.add_argument("--as-of", metavar="YYYY-MM-DD", type=as_of_date, default=None,
                   help="judge support windows and price the control plane on this day (default: today)")
    p.add_argument("--fail-on-unchecked", action="store_true",
                   help="exit 1 when the plan could not look inside a component (a multi-language component such as "
                        "pulumi-eks's), instead of listing it as not checked")
    p.add_argument("--require-lock", action="store_true",
                   help="exit 1 when no node-group lock holds the plan (by default a prod stack without one warns)")
    p.add_argument("--debug", action="store_true", help="print the traceback when the program fails")
    p.set_defaults(run=run_plan)


def add_stack_options(p: argparse.ArgumentParser, then: str = "", from_plan: Optional[str] = None) -> None:
    """Which stack file, in which project, with which extra invoke answers (plan and lock). `then` ends the
    sources' help (" and lock it"); `from_plan`, the help of a third source: a plan written by `plan --json`."""
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--stack", metavar="NAME", help=f"plan Pulumi.NAME.yaml in the project's stackConfigDir{then}")
    which.add_argument("--config", metavar="FILE", type=Path, help=f"plan any stack file{then}")
    if from_plan:
        which.add_argument("--plan", metavar="JSON", type=Path, help=from_plan)
    p.add_argument("--project-dir", metavar="DIR", type=Path,
                   help="the Pulumi project (default: the one holding Pulumi.yaml at or above the --config file, "
                        "else at or above the working directory)")
    p.add_argument("--mocks", metavar="FILE", type=Path,
                   help="answers for invokes the planner does not know: JSON or YAML, token -> result (camelCase)")
    p.add_argument("--esc-values", metavar="FILE", type=Path, action="append", default=[],
                   help="the opened values of the Pulumi ESC environments the stack file imports (`environment:`): "
                        "what `esc open ENV --format json` prints, JSON or YAML; repeat it for each environment, in "
                        "the stack's order (default: `esc open` when the esc CLI is on PATH)")


def add_policy_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--policy-config", metavar="FILE", type=Path,
                   help="policy pack config (the file given to --policy-pack-config)")
    p.add_argument("--policy-pack", metavar="DIR", type=Path,
                   help="the policy pack's folder, where a relative lockFile starts (default: <project>/policies)")


def as_of_date(text: str) -> datetime.date:
    """`--as-of`: an ISO day; argparse reports a bad one as a usage error (exit 2)."""
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date like 2026-11-23") from None


def run_plan(args: argparse.Namespace) -> int:
    from gpu_platform.planner import outputs, render, sections, unchecked, verdict
    from gpu_platform.planner import plan as plan_doc

    as_of = args.as_of or datetime.date.today()
    project, stack = load(args)
    verdict.read_config(args.policy_config)
    if args.lock is not None:
        verdict.read_lock(args.lock)
    platform, spec = projects.prevalidate(project, stack, as_of)

    recording = run_program(project, stack, args.debug, args.mocks)
    if recording is None:
        return EXIT_FAILED
    plan = plan_doc.build_plan(recording)
    active = sections.sections()
    if spec is None:
        left_out = sorted(s.name for s in active if s.needs_platform)
        print(projects.left_out_note(project, stack, left_out), file=sys.stderr)
    ctx = sections.PlanContext(plan=plan, recording=recording, stack=stack, platform=platform, spec=spec, as_of=as_of)
    plan.update(sections.build_all(ctx))
    try:
        plan["policy"]["violations"] = verdict.evaluate(plan, args.policy_config, lock=args.lock, project=project,
                                                        pack_dir=projects.pack_dir(project, args.policy_pack),
                                                        as_of=as_of)
    except PlannerError as err:  # a lock that cannot hold this plan: its advice names the file planned
        from gpu_platform.planner.lock_gate import advice

        raise PlannerError([advice(p, project, stack) for p in err.problems]) from None
    _hold_to_a_lock(args, plan, project, stack, spec)
    budget = verdict.budget_in_force(verdict.plan_derived_config(plan), verdict.read_config(args.policy_config))
    if budget is not None:
        plan["policy"]["budget"] = budget

    if args.json:
        plan_doc.write(plan, args.json)
    if args.out:
        outputs.write(args.out, ctx, active)
    shown = render.markdown(plan, active) if args.format == "markdown" else render.text(plan, active)
    sys.stdout.write(shown)
    for message in dict.fromkeys(recording.warnings):
        print(message, file=sys.stderr)
    from gpu_platform.planner.lifecycle_section import NAME as LIFECYCLE
    from gpu_platform.planner.lifecycle_section import errors as lifecycle_errors

    expired = lifecycle_errors(plan.get(LIFECYCLE))
    if expired:  # EKS or NVIDIA no longer supports what the file pins: as invalid as a bad field
        _problems([f"{stackfile.show_path(stack.path)}: {e}" for e in expired])
        return EXIT_INVALID
    if plan.get("notChecked"):
        if args.fail_on_unchecked:
            print(unchecked.failure(plan["notChecked"]), file=sys.stderr)
            return EXIT_VIOLATIONS
        print(unchecked.warning(plan["notChecked"]), file=sys.stderr)
    mandatory = any(v.get("level") == "mandatory" for v in plan["policy"]["violations"])
    return EXIT_VIOLATIONS if mandatory else EXIT_OK


def _hold_to_a_lock(args: argparse.Namespace, plan: dict[str, Any], project: stackfile.Project,
                   stack: stackfile.StackConfig, spec: Any) -> None:
    """Lock advice naming the file planned; a prod stack no lock holds warns (`--require-lock`: refuses)."""
    from gpu_platform.planner import lock_gate, verdict

    violations = lock_gate.with_lock_advice(plan["policy"]["violations"], project, stack)
    plan["policy"]["violations"] = violations
    environment = getattr(spec, "environment", None)
    if not (args.require_lock or environment == "prod") or lock_gate.reported(violations):
        return
    if verdict.holds_a_lock(plan, args.policy_config, args.lock, project=project,
                            pack_dir=projects.pack_dir(project, args.policy_pack)):
        return
    message = lock_gate.missing_lock(project, stack, environment, violations)
    if args.require_lock:
        violations.insert(0, lock_gate.lock_violation(message))
    else:
        print(f"warning: {message}; `--require-lock` makes this an error", file=sys.stderr)


def load(args: argparse.Namespace) -> tuple[stackfile.Project, stackfile.StackConfig]:
    """The project and stack file `--stack`/`--config` and `--project-dir` name."""
    project = projects.find(args.project_dir, args.config)
    return project, stackfile.load_stack(project, stack=args.stack, path=args.config, esc_values=args.esc_values)


def run_program(project: stackfile.Project, stack: stackfile.StackConfig, debug: bool,
                mocks_file: Optional[Path] = None) -> Any:
    """Run the program; None (after printing why) when it failed for a reason other than bad input."""
    from gpu_platform.planner import engine, user_mocks
    from gpu_platform.planner.mocks import PlannerMocks, UnansweredInvoke

    answers = user_mocks.load(mocks_file) if mocks_file is not None else {}
    mocks = PlannerMocks(region=stack.config.get("aws:region", "us-east-1"), user=answers)
    try:
        return engine.run_program(project.program or project.dir, stack=stack.stack, config=stack.config, project=project.name,
                                  secret_keys=stack.secret_keys, mocks=mocks)
    except PlannerError:
        raise
    except Exception as exc:  # noqa: BLE001 the program's own errors are reported, not raised
        projects.raise_spec_error(exc, stack.path, _program_frame(exc, project.dir))
        if mocks.answered and not isinstance(exc, UnansweredInvoke):
            raise PlannerError(user_mocks.failed_message(mocks_file, mocks.answered, exc)) from None
        if isinstance(exc, UnansweredInvoke):
            print(f"error: {exc}", file=sys.stderr)
        else:
            where = _program_frame(exc, project.dir)
            print(f"error: the program failed{where}: {type(exc).__name__}: {exc}", file=sys.stderr)
        _traceback_hint(exc, debug)
        return None


def _program_frame(exc: BaseException, program_dir: Path) -> str:
    """` at components/x.py:12`: the innermost traceback frame in the program's own files."""
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename)
        mine = path.is_relative_to(PLANNER_DIR) or {".venv", "site-packages"} & set(path.parts)
        if path.is_relative_to(program_dir) and not mine:
            found = f" at {path.relative_to(program_dir)}:{frame.lineno}"
    return found


def _traceback_hint(exc: BaseException, debug: bool) -> None:
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    else:
        print("(run with --debug for the traceback)", file=sys.stderr)


def _problems(problems: list[str]) -> None:
    """One line per problem, always: a character that would break the line is shown escaped."""
    for problem in problems:
        line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in problem)
        print(f"error: {line}", file=sys.stderr)

