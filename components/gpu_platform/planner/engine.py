"""Run a Pulumi program under the SDK's mock engine and record every registration it makes.

This is what `pulumi preview` would send to the engine, minus the engine: the program runs as the
language host runs it (`runpy` inside a root Stack), and a monitor records each RegisterResource
request (type, name, parent, provider, inputs as sent, options) and the stack's outputs. Each run
gets its own event loop and a copy of the context, so runs never share runtime state and can repeat
in one process. The monitor answers synchronously on the program's loop (see InlineExecutor).
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gc
import os
import runpy
import sys
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional
from collections.abc import Callable

from google.protobuf import empty_pb2, json_format
from pulumi import _types as sdk_types
from pulumi.runtime import mocks as sdk_mocks
from pulumi.runtime import rpc as sdk_rpc
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime import settings as sdk_settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.proto import engine_pb2, provider_pb2, resource_pb2, source_pb2
from pulumi.runtime.stack import Stack

from gpu_platform.planner.errors import PlannerError
from gpu_platform.planner.mocks import PlannerMocks
from gpu_platform.planner.wire import for_mocks, struct_to_plain, to_struct

STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass
class Registration:
    """One RegisterResource request, as sent by the program, plus what the mocks answered."""

    urn: str
    type: str
    name: str
    custom: bool
    parent: Optional[str]
    provider: Optional[str]
    inputs: dict[str, Any]  # camelCase wire names; secrets as wire.Secret
    options: dict[str, Any]
    id: str = ""
    outputs: dict[str, Any] = field(default_factory=dict)  # the mocks' answer (SDK form)
    remote: bool = False  # a multi-language component: its provider plugin would build its children


@dataclass
class Recording:
    project: str
    stack: str
    root_urn: str
    resources: list[Registration]
    outputs: dict[str, Any]  # stack outputs; secrets as wire.Secret
    component_outputs: dict[str, dict[str, Any]]  # urn -> register_outputs of each component
    warnings: list[str]


def _options(request: Any) -> dict[str, Any]:
    """The resource options a request carries, under the plan's names (unset stays null/empty)."""
    options: dict[str, Any] = {
        "protect": request.protect if request.HasField("protect") else False,
        "retainOnDelete": request.retainOnDelete if request.HasField("retainOnDelete") else False,
        "ignoreChanges": list(request.ignoreChanges),
        "deleteBeforeReplace": request.deleteBeforeReplace if request.deleteBeforeReplaceDefined else None,
        "dependsOn": sorted(set(request.dependencies)),
        "aliases": [_alias(a) for a in request.aliases] + [{"urn": u} for u in request.aliasURNs],
        "replaceOnChanges": list(request.replaceOnChanges),
        "additionalSecretOutputs": list(request.additionalSecretOutputs),
    }
    if request.HasField("customTimeouts"):
        options["customTimeouts"] = {k: v for k, v in json_format.MessageToDict(request.customTimeouts).items() if v}
    if request.deletedWith:
        options["deletedWith"] = request.deletedWith
    return options


def _alias(alias: Any) -> dict[str, Any]:
    if alias.WhichOneof("alias") == "urn":
        return {"urn": alias.urn}
    return {k: v for k, v in json_format.MessageToDict(alias.spec).items() if v != ""}


class RecordingMonitor(sdk_mocks.MockMonitor):
    """The SDK's mock monitor made synchronous and recording.

    Every request is answered in plain Python (no nested event loop, no SDK (de)serialization), so
    the monitor can run inline on the program's loop; URNs are minted the way the engine mints them.
    """

    def __init__(self, mocks: sdk_mocks.Mocks):
        super().__init__(mocks)
        self.registrations: list[Registration] = []
        self.outputs_by_urn: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []
        self.root_urn = ""

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        # The engine qualifies a type with its parent's whole type chain, except the root stack's.
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != STACK_TYPE:
                type_ = f"{parent_type}${type_}"
        return f"urn:pulumi:{sdk_settings.get_stack()}::{sdk_settings.get_project()}::{type_}::{name}"

    def RegisterResource(self, request):
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == STACK_TYPE:
            self.root_urn = urn
            return resource_pb2.RegisterResourceResponse(urn=urn)
        if request.transforms:
            self.notes.append(f"warning: {urn}: resource transforms are not applied by the offline planner")
        inputs = struct_to_plain(request.object)
        if request.remote:  # built by its provider plugin, which no offline run has: nothing inside is seen
            self.registrations.append(Registration(
                urn=urn, type=request.type, name=request.name, custom=False, parent=request.parent or None,
                provider=request.provider or None, inputs=inputs, options=_options(request), remote=True))
            # as the engine answers a resource it could not make: every output unknown, so the program
            # goes on (an output read through it stays unknown instead of failing on None)
            return resource_pb2.RegisterResourceResponse(urn=urn, result=resource_pb2.Result.FAIL)
        rid, state = self.mocks.new_resource(sdk_mocks.MockResourceArgs(
            typ=request.type, name=request.name, inputs=for_mocks(inputs), provider=request.provider,
            resource_id=request.importId, custom=request.custom))
        self.resources[urn] = sdk_mocks.MockMonitor.ResourceRegistration(urn, rid, state)
        self.registrations.append(Registration(
            urn=urn, type=request.type, name=request.name, custom=request.custom,
            parent=request.parent or None, provider=request.provider or None,
            inputs=inputs, options=_options(request), id=rid or "", outputs=state))
        return resource_pb2.RegisterResourceResponse(urn=urn, id=rid or "", object=to_struct(state))

    def RegisterResourceOutputs(self, request):
        self.outputs_by_urn[request.urn] = struct_to_plain(request.outputs)
        return empty_pb2.Empty()

    def ReadResource(self, request):
        urn = self.make_urn(request.parent, request.type, request.name)
        rid, state = self.mocks.new_resource(sdk_mocks.MockResourceArgs(
            typ=request.type, name=request.name, inputs=for_mocks(struct_to_plain(request.properties)),
            provider=request.provider, resource_id=request.id, custom=True))
        self.resources[urn] = sdk_mocks.MockMonitor.ResourceRegistration(urn, rid, state)
        return resource_pb2.ReadResourceResponse(urn=urn, properties=to_struct(state))

    def Invoke(self, request):
        args = for_mocks(struct_to_plain(request.args))
        if request.tok == "pulumi:pulumi:getResource":
            found = self.resources.get(args["urn"])
            if found is None:
                raise LookupError(f"unknown resource {args['urn']}")
            answer: Any = found._asdict()
        else:
            answer = self.mocks.call(sdk_mocks.MockCallArgs(token=request.tok, args=args, provider=request.provider))
        failures = None
        if isinstance(answer, tuple):  # (result, [(property, reason)...]) like the stock monitor accepts
            answer, failures = answer[0], [provider_pb2.CheckFailure(property=p, reason=r) for p, r in answer[1] or ()]
        return resource_pb2.ResourceInvokeResponse(failures=failures, **{"return": to_struct(answer)})


class InlineExecutor(ThreadPoolExecutor):
    """Runs each job at once on the calling thread.

    The SDK sends every engine call through `run_in_executor`; with a monitor that answers in plain
    Python, a worker thread only adds hand-offs. (asyncio only accepts ThreadPoolExecutor instances.)
    """

    def submit(self, fn, /, *args, **kwargs):
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 handed to the awaiting coroutine, as a thread would
            future.set_exception(exc)
        return future


class RecordingEngine:
    """Engine log sink: keeps warnings and errors for the user, drops debug chatter cheaply."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def Log(self, request):
        if request.severity >= engine_pb2.WARNING:
            level = "error" if request.severity == engine_pb2.ERROR else "warning"
            self.messages.append(f"{level}: {request.message.strip()}")


def run_program(
    program_dir: Path | str,
    *,
    stack: str,
    config: dict[str, str],
    project: str = "gpu-platform",
    mocks: Optional[sdk_mocks.Mocks] = None,
    secret_keys: tuple[str, ...] = (),
) -> Recording:
    """Run `<program_dir>/__main__.py` (or `program_dir` itself when it is a file) offline with `config`
    (`ns:key` -> string) and record it; keys in `secret_keys` are secrets to the program
    (`pulumi.Config().require_secret`, `is_config_secret`).

    Exceptions from the program propagate unchanged once the runtime has wound down.
    """
    program_dir = Path(program_dir).resolve()
    main = program_dir / "__main__.py"
    if program_dir.is_file():  # Pulumi.yaml's `main:` may name the program's file
        main, program_dir = program_dir, program_dir.parent
    if not main.is_file():
        raise PlannerError(f"{program_dir}: no Pulumi program (__main__.py) here")
    if mocks is None:
        mocks = PlannerMocks(region=config.get("aws:region", "us-east-1"))
    monitor = RecordingMonitor(mocks)
    engine = RecordingEngine()

    def run() -> None:
        _configure(monitor, engine, project, stack, config, secret_keys)
        previous = _current_loop()
        loop = asyncio.new_event_loop()
        loop.set_default_executor(InlineExecutor())
        asyncio.set_event_loop(loop)
        try:
            with _program_paths(program_dir), _paused_gc(), _no_stack_traces(), _remembered_type_unwrapping():
                loop.run_until_complete(_run_stack(lambda: runpy.run_path(str(main), run_name="__main__")))
        finally:
            _close(loop)
            asyncio.set_event_loop(previous)  # a caller's loop (e.g. other mock tests) stays theirs

    contextvars.copy_context().run(run)
    return Recording(
        project=project, stack=stack, root_urn=monitor.root_urn, resources=monitor.registrations,
        outputs=monitor.outputs_by_urn.pop(monitor.root_urn, {}), component_outputs=monitor.outputs_by_urn,
        warnings=engine.messages + monitor.notes)


def _configure(monitor: RecordingMonitor, engine: RecordingEngine, project: str, stack: str,
               config: dict[str, str], secret_keys: tuple[str, ...] = ()) -> None:
    """Fresh runtime state in the current context: what `set_mocks` does, minus its early root stack.

    `set_mocks` creates and finishes a root stack at once, which would drop later exports;
    `_run_stack` creates the root stack around the program, as the language host does.
    """
    sdk_settings.reset_options(project=project, stack=stack, preview=False, organization="organization")
    set_all_config(dict(config), list(secret_keys))
    features = set(monitor.GetDeploymentInfo(empty_pb2.Empty()).supportedFeatures)
    sdk_settings.configure(sdk_mocks.MockSettings(
        monitor=monitor, monitor_features=features, engine=engine, project=project, stack=stack,
        dry_run=False, organization="organization", callbacks=None))


async def _run_stack(program: Callable[[], Any]) -> None:
    """The SDK's `run_in_stack`: the program runs inside a root Stack, then every RPC and output
    it started is awaited, and the program's own error wins over errors from the wind-down."""
    stack = Stack()
    failure: Optional[BaseException] = None
    try:
        try:
            program()
            take_entry = getattr(stack, "_take_async_program", None)  # `pulumi.run(main)` programs
            entry = take_entry() if take_entry else None
            if entry is not None:
                stack._add_program_outputs(await entry())
        finally:
            stack._finish()
    except BaseException as exc:  # noqa: BLE001 re-raised below, after the wind-down
        failure = exc
    try:
        await _drain()
    except BaseException:
        if failure is None:
            raise
    finally:
        await sdk_settings._shutdown_callbacks()
    if failure is not None:
        raise failure


async def _drain() -> None:
    """Wait until no RPC or output is outstanding, re-raising the first failure.

    Same contract as the SDK's `wait_for_rpcs`, in linear time: it gathers each generation of
    pending outputs at once instead of re-waiting on all of them after every single completion
    (quadratic in the number of outputs, which dominates large programs). No polling.
    """
    state = sdk_settings.SETTINGS
    rpcs = state.rpc_manager
    while True:
        while rpcs.rpcs:
            await rpcs.rpcs.pop()
        if rpcs.unhandled_exception is not None:
            raise rpcs.unhandled_exception.with_traceback(rpcs.exception_traceback)
        with state.lock:
            pending = list(state.outputs)
            state.outputs.clear()
        if pending:
            await asyncio.gather(*pending)
        elif not rpcs.rpcs:
            return


@contextlib.contextmanager
def _paused_gc():
    """No cyclic garbage collection while the program runs.

    The SDK builds a task, futures and Outputs per property, all alive until the run ends, so the
    collector only re-scans a growing heap: it takes about half the run time on large programs and
    frees almost nothing. Objects that exist before the run are frozen out of the scans too.
    """
    was_enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def _no_stack_traces():
    """Skip the SDK's per-resource stack capture (source positions for the CLI's display).

    `traceback.extract_stack` stats every file on the stack for every resource: about a tenth of
    the run, for data a plan does not use. Restored afterwards; a no-op if the SDK renames it.
    """
    name = "_get_stack_trace"
    original = getattr(sdk_resource, name, None)
    if original is None:
        yield
        return
    setattr(sdk_resource, name, source_pb2.StackTrace)
    try:
        yield
    finally:
        setattr(sdk_resource, name, original)


# The SDK's pure functions of a type annotation that it calls for every value it sends or receives: what
# Input[T], Optional[T] or list[T] unwraps to (pulumi/_types.py, pulumi/runtime/rpc.py).
_TYPE_UNWRAPPING = ((sdk_types, "unwrap_type"), (sdk_types, "unwrap_optional_type"), (sdk_rpc, "_get_list_element_type"))


@contextlib.contextmanager
def _remembered_type_unwrapping():
    """Each of _TYPE_UNWRAPPING remembers its answer per annotation for the run.

    A typed SDK class sends each property through them with the property's annotation: the same few hundred
    annotations, hundreds of thousands of times in a large program, each answer re-derived with typing's
    introspection (about a tenth of the run). Answers are kept by the annotation's identity (typing's `==`
    ignores a Union's order), with the annotation held so its identity is not reused, and dropped with the
    originals restored afterwards; a missing name (an SDK that renamed it) is left alone.
    """
    originals = [(module, name, getattr(module, name)) for module, name in _TYPE_UNWRAPPING if hasattr(module, name)]
    for module, name, original in originals:
        setattr(module, name, _by_identity(original))
    try:
        yield
    finally:
        for module, name, original in originals:
            setattr(module, name, original)


def _by_identity(function: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`function` of one argument answering again from memory when given the same object (errors are not kept)."""
    answers: dict[int, tuple[Any, Any]] = {}

    def remembered(value: Any) -> Any:
        known = answers.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        answer = function(value)
        answers[id(value)] = (value, answer)
        return answer

    return remembered


@contextlib.contextmanager
def _program_paths(program_dir: Path):
    """The program's directory as cwd and first on sys.path, as `pulumi` runs it; restored after."""
    old_cwd, old_path = os.getcwd(), list(sys.path)
    sys.path.insert(0, str(program_dir))
    os.chdir(program_dir)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what a failed program left pending, then close the loop (its executor has no threads)."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.close()


def _current_loop() -> Optional[asyncio.AbstractEventLoop]:
    """This thread's event loop, if it has one, without creating or warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:
            return None
