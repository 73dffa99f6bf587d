"""Run a Pulumi program under the SDK's mock engine and record every registration it makes.

This is what `pulumi preview` would send to the engine, minus the engine: the program runs exactly as
the language host runs it (`runpy` inside `run_in_stack`), and a monitor records each
RegisterResource request (type, name, parent, provider, inputs as sent, options) and the stack's
outputs. Each run gets its own event loop and a copy of the context, so runs never share runtime
state and can repeat in one process.
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import runpy
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from google.protobuf import empty_pb2, json_format
from pulumi.runtime import mocks as sdk_mocks
from pulumi.runtime import settings as sdk_settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.proto import engine_pb2, resource_pb2
from pulumi.runtime.stack import run_in_stack

from .errors import PlannerError
from .mocks import PlannerMocks
from .wire import struct_to_plain

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
    """The SDK's mock monitor, recording each request and minting URNs the way the engine does."""

    def __init__(self, mocks: sdk_mocks.Mocks):
        super().__init__(mocks)
        self.registrations: list[Registration] = []
        self.outputs_by_urn: dict[str, dict[str, Any]] = {}
        self.root_urn = ""

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        # The engine qualifies a type with its parent's whole type chain, except the root stack's.
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != STACK_TYPE:
                type_ = f"{parent_type}${type_}"
        return f"urn:pulumi:{sdk_settings.get_stack()}::{sdk_settings.get_project()}::{type_}::{name}"

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type == STACK_TYPE:
            self.root_urn = response.urn
            return response
        registered = self.resources[response.urn]
        self.registrations.append(Registration(
            urn=response.urn, type=request.type, name=request.name, custom=request.custom,
            parent=request.parent or None, provider=request.provider or None,
            inputs=struct_to_plain(request.object), options=_options(request),
            id=registered.id or "", outputs=registered.state))
        return response

    def RegisterResourceOutputs(self, request):
        self.outputs_by_urn[request.urn] = struct_to_plain(request.outputs)
        return empty_pb2.Empty()


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
) -> Recording:
    """Run `<program_dir>/__main__.py` offline with `config` (`ns:key` -> string) and record it.

    Exceptions from the program propagate unchanged once the runtime has wound down.
    """
    program_dir = Path(program_dir).resolve()
    main = program_dir / "__main__.py"
    if not main.is_file():
        raise PlannerError(f"{program_dir}: no Pulumi program (__main__.py) here")
    if mocks is None:
        mocks = PlannerMocks(region=config.get("aws:region", "us-east-1"))
    monitor = RecordingMonitor(mocks)
    engine = RecordingEngine()

    def run() -> None:
        _configure(monitor, engine, project, stack, config)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            with _program_paths(program_dir):
                loop.run_until_complete(run_in_stack(lambda: runpy.run_path(str(main), run_name="__main__")))
        finally:
            _close(loop)

    contextvars.copy_context().run(run)
    return Recording(
        project=project, stack=stack, root_urn=monitor.root_urn, resources=monitor.registrations,
        outputs=monitor.outputs_by_urn.pop(monitor.root_urn, {}), component_outputs=monitor.outputs_by_urn,
        warnings=engine.messages)


def _configure(monitor: RecordingMonitor, engine: RecordingEngine, project: str, stack: str,
               config: dict[str, str]) -> None:
    """Fresh runtime state in the current context: what `set_mocks` does, minus its early root stack.

    `set_mocks` creates and finishes a root stack at once, which would drop later exports;
    `run_in_stack` creates the root stack around the program, as the language host does.
    """
    sdk_settings.reset_options(project=project, stack=stack, preview=False, organization="organization")
    set_all_config(dict(config), [])
    features = set(monitor.GetDeploymentInfo(empty_pb2.Empty()).supportedFeatures)
    sdk_settings.configure(sdk_mocks.MockSettings(
        monitor=monitor, monitor_features=features, engine=engine, project=project, stack=stack,
        dry_run=False, organization="organization", callbacks=None))


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
    """Cancel what a failed program left pending, then close the loop and its worker threads."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()
    asyncio.set_event_loop(None)
