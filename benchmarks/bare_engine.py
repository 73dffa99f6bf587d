"""The bare-engine floor: a Pulumi program, generated from a plan's own JSON, that registers the same
resources (types, names, parents, providers, inputs, options) and exports the same stack outputs with
no logic at all, to run under the planner's engine (gpu_platform.planner.engine.run_program).

What it costs is what any program registering these resources pays: the interpreter, the SDK modules
that define the plan's types, and the SDK's registration path (serialisation, the monitor, the mocks,
output resolution) for each resource. What a plan costs beyond it is the platform's own work: reading
and checking the stack file, the decisions, the rendered values and the Outputs between resources, the
SDK classes' argument handling, the policy verdict and the plan's sections.

Resources are registered through the SDK's generic classes (CustomResource, ProviderResource,
ComponentResource) under their recorded type tokens, so no argument is renamed or defaulted on the way:
`recorded(floor_dir)` plans the floor and `same_registrations` checks it recorded what the plan did.

The typed floor (`write_floor(..., typed=True)`) registers the same resources through the SDKs' typed
classes instead (`pulumi_aws.eks.NodeGroup`, `pulumi_kubernetes.apps.v1.Deployment`, and the Kubernetes
SDK's CustomResource for a custom object), as any real program does: what it costs above the generic floor
is the SDKs' own typed argument handling and output translation, which no program using them avoids.
Providers and objects CustomResource cannot carry (fields beside metadata and spec) stay generic, as the
platform registers them. Each class's keyword names and the aliases and secret outputs it adds itself are
worked out when the floor is written, so the program only looks them up.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import re
from pathlib import Path
from typing import Any, Optional

CUSTOM_OBJECTS = "pulumi_kubernetes.apiextensions"  # the Kubernetes SDK's module for objects of any kind

PROGRAM = '''\
"""Registers the resources of plan.json as recorded, with no logic (benchmarks/bare_engine.py)."""
import importlib
import importlib.util
import json

import pulumi

SECRET, PROVIDERS = "[secret]", "pulumi:providers:"
data = json.loads(open("plan.json").read())
for module in data["modules"]:
    getattr(importlib.import_module(module), "__all__", None)  # the SDK loads a module on first use
by_urn = {}


def value(v):
    if v == SECRET:
        return pulumi.Output.secret(SECRET)
    if isinstance(v, dict):
        return {k: value(x) for k, x in v.items()}
    if isinstance(v, list):
        return [value(x) for x in v]
    return v


def alias(a):
    if "urn" in a:
        return a["urn"]
    names = {"name": "name", "type": "type_", "project": "project", "stack": "stack", "parentUrn": "parent"}
    return pulumi.Alias(**{names[k]: v for k, v in a.items()})


def options(r, typed):
    o, timeouts = r["options"], r["options"].get("customTimeouts")
    provider = r["provider"] and by_urn[r["provider"].rsplit("::", 1)[0]]
    own_aliases, own_secrets = (typed["aliases"], typed["secrets"]) if typed else ((), ())
    return pulumi.ResourceOptions(
        parent=by_urn.get(r["parent"]), provider=provider or None, protect=o["protect"] or None,
        retain_on_delete=o["retainOnDelete"] or None, ignore_changes=o["ignoreChanges"] or None,
        delete_before_replace=o["deleteBeforeReplace"], depends_on=[by_urn[u] for u in o["dependsOn"]] or None,
        aliases=[alias(a) for a in o["aliases"] if a not in own_aliases] or None,
        replace_on_changes=o["replaceOnChanges"] or None,
        additional_secret_outputs=[s for s in o["additionalSecretOutputs"] if s not in own_secrets] or None,
        custom_timeouts=pulumi.CustomTimeouts(**timeouts) if timeouts else None,
        deleted_with=by_urn[o["deletedWith"]] if o.get("deletedWith") else None)


classes = {t: (getattr(importlib.import_module(c["module"]), c["class"]), c) for t, c in data["classes"].items()}
for r in data["resources"]:
    cls, typed = classes[r["type"]] if r.get("typed") else (None, None)
    props, opts = value(r["inputs"]), options(r, typed)
    if cls is not None:
        names = typed["names"]
        res = cls(r["name"], opts=opts, **{names[k]: v for k, v in props.items()})
    elif r["type"].startswith(PROVIDERS):
        res = pulumi.ProviderResource(r["type"].removeprefix(PROVIDERS), r["name"], props, opts)
    elif r["custom"]:
        res = pulumi.CustomResource(r["type"], r["name"], props, opts)
    else:
        res = pulumi.ComponentResource(r["type"], r["name"], props, opts)
    by_urn[r["urn"]] = res
for key, v in data["outputs"].items():
    pulumi.export(key, value(v))
'''


def sdk_modules(plan: dict) -> list[str]:
    """The SDK modules that define the plan's resource types: `kubernetes:rbac.authorization.k8s.io/v1:Role`
    -> pulumi_kubernetes.rbac.v1, `kubernetes:apps/v1:Deployment` -> pulumi_kubernetes.apps.v1,
    `aws:vpc/securityGroupIngressRule:...` -> pulumi_aws.vpc; a custom resource's type (a group the SDK has
    no module for, `monitoring.coreos.com/v1`) -> pulumi_kubernetes.apiextensions."""
    modules = {_sdk_module(type_) for type_ in {r["type"] for r in plan["resources"]}}
    return sorted(m for m in modules if m is not None)


def _sdk_module(type_: str) -> Optional[str]:
    """The SDK module defining `type_` (see sdk_modules); None for providers and components."""
    package, module, _ = type_.split(":")
    if package == "aws":
        return f"pulumi_aws.{module.split('/')[0]}"
    if package != "kubernetes":
        return None
    group, _, version = module.rpartition("/")
    typed = f"pulumi_kubernetes.{group.split('.')[0]}.{version}"
    return typed if _sdk_has(typed, group) else CUSTOM_OBJECTS


def _sdk_has(module: str, group: str) -> bool:
    """Whether the Kubernetes SDK defines `module` for the API group `group` (its built-in groups: core,
    apps, batch, policy, *.k8s.io, helm.sh...), not a custom resource's group that shares a first label."""
    builtin = "." not in group or group.endswith(".k8s.io") or group == "helm.sh"
    return builtin and importlib.util.find_spec(module) is not None


def typed_classes(plan: dict) -> dict[str, dict]:
    """Per custom resource type of `plan` the SDK class a real program registers it with, for the typed floor:
    its module and name, each recorded input's keyword (`nodeGroupName` -> `node_group_name`), and the aliases
    and secret outputs the class adds itself (the recorded options hold them once; passing them again would
    double them). Types no typed class carries are left out (registered generically)."""
    classes: dict[str, dict] = {}
    for r in plan["resources"]:
        if r["custom"] and r["type"] not in classes:
            cls = _sdk_class(r["type"], r["inputs"])
            if cls is not None:
                classes[r["type"]] = {"module": cls.__module__, "class": cls.__name__, "names": {}, **_own_options(cls)}
    for r in plan["resources"]:
        typed = classes.get(r["type"])
        if typed is not None:
            for key in set(r["inputs"]) - set(typed["names"]):
                typed["names"][key] = _keyword(importlib.import_module(typed["module"]), typed["class"], key)
    return classes


def _by_class(resource: dict, typed: Optional[dict]) -> bool:
    """Whether the program registered `resource` through its typed class: the class adds its own aliases and
    secret outputs, so a resource recorded without them was registered generically (a whole Kubernetes object)."""
    options = resource["options"]
    return typed is not None and all(a in options["aliases"] for a in typed["aliases"]) and all(
        s in options["additionalSecretOutputs"] for s in typed["secrets"])


def _sdk_class(type_: str, inputs: dict) -> Optional[type]:
    module = _sdk_module(type_)
    if module is None:
        return None  # providers and components stay generic
    if module != CUSTOM_OBJECTS:
        return getattr(importlib.import_module(module), type_.rsplit(":", 1)[1], None)
    if set(inputs) <= {"apiVersion", "kind", "metadata", "spec"}:  # all CustomResource's arguments carry
        return importlib.import_module(CUSTOM_OBJECTS).CustomResource
    return None


def _keyword(module: Any, name: str, key: str) -> str:
    """Class `name`'s keyword for the input `key`: from its arguments class's property names (`NodeGroupArgs`,
    `RoleInitArgs`), else snake_case (`CustomResource`'s `api_version`)."""
    from pulumi import _types

    args = getattr(module, f"{name}InitArgs", None) or getattr(module, f"{name}Args", None)
    names = _types.input_type_py_to_pulumi_names(args) if args is not None and _types.is_input_type(args) else {}
    return next((py for py, pulumi_name in names.items() if pulumi_name == key),
                re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower())


def _own_options(cls: type) -> dict[str, list]:
    """The aliases (`{"type": ...}`, as a plan records them) and secret outputs a typed class adds to the options
    it is given (read from its generated `_internal_init`)."""
    try:
        source = inspect.getsource(cls._internal_init)  # type: ignore[attr-defined]
    except (AttributeError, OSError, TypeError):
        return {"aliases": [], "secrets": []}
    secrets = "".join(re.findall(r"additional_secret_outputs=\[([^\]]*)\]", source))
    return {"aliases": [{"type": t} for t in re.findall(r'Alias\(type_="([^"]+)"\)', source)],
            "secrets": re.findall(r'"([^"]+)"', secrets)}


def registration_order(resources: list[dict]) -> list[dict]:
    """Each resource after its parent, provider, dependencies and deleted-with target (a plan lists
    siblings by type and name, not in the order they can be created)."""
    by_urn = {r["urn"]: r for r in resources}
    out: list[dict] = []
    done: set[str] = set()

    def needs(r: dict) -> list[str]:
        o = r["options"]
        refs = [r["parent"], (r["provider"] or "").rsplit("::", 1)[0], o.get("deletedWith"), *o["dependsOn"]]
        return [u for u in refs if u in by_urn]

    def visit(r: dict) -> None:
        stack = [(r, iter(needs(r)))]
        done.add(r["urn"])
        while stack:
            current, pending = stack[-1]
            nxt = next((u for u in pending if u not in done), None)
            if nxt is None:
                stack.pop()
                out.append(current)
            else:
                done.add(nxt)
                stack.append((by_urn[nxt], iter(needs(by_urn[nxt]))))

    for r in resources:
        if r["urn"] not in done:
            visit(r)
    return out


def write_floor(plan: dict, into: Path, typed: bool = False) -> Path:
    """The floor program of `plan` in the directory `into` (created): __main__.py and its plan.json; `typed`:
    the typed floor (the SDKs' typed classes)."""
    into.mkdir(parents=True, exist_ok=True)
    classes = typed_classes(plan) if typed else {}
    data = {"modules": sdk_modules(plan), "outputs": plan["outputs"], "classes": classes,
            "resources": [{**r, "typed": _by_class(r, classes.get(r["type"]))} for r in registration_order(plan["resources"])]}
    (into / "plan.json").write_text(json.dumps(data))
    (into / "__main__.py").write_text(PROGRAM)
    return into


def run_floor(floor_dir: Path, project: str, stack: str, region: str) -> Any:
    """Run the floor under the planner's engine; returns its Recording."""
    engine = importlib.import_module("gpu_platform.planner.engine")
    return engine.run_program(floor_dir, stack=stack, project=project, config={"aws:region": region})


def recorded(floor_dir: Path, plan: dict, region: str) -> dict:
    """The plan document of the floor's registrations (resources and outputs, as the plan writes them)."""
    plans = importlib.import_module("gpu_platform.planner.plan")
    return plans.build_plan(run_floor(floor_dir, plan["project"], plan["stack"], region))


def same_registrations(plan: dict, floor: dict) -> list[str]:
    """Where the floor's registrations differ from the plan's (nothing when it is a true floor)."""
    ours = {r["urn"]: r for r in floor["resources"]}
    diffs = [f"{r['urn']}: missing" for r in plan["resources"] if r["urn"] not in ours]
    diffs += [f"{r['urn']}: {key} {r[key]!r} != {ours[r['urn']][key]!r}"
              for r in plan["resources"] if r["urn"] in ours for key in r if r[key] != ours[r["urn"]][key]]
    if len(ours) != len(plan["resources"]):
        diffs.append(f"{len(ours)} resources registered, {len(plan['resources'])} planned")
    if floor["outputs"] != plan["outputs"]:
        diffs.append("stack outputs differ")
    return diffs


def region_of(plan: dict) -> str:
    """The region the plan's AWS provider was given (the mocks answer in it), else us-east-1."""
    providers = (r["inputs"].get("region") for r in plan["resources"] if r["type"] == "pulumi:providers:aws")
    return next((r for r in providers if isinstance(r, str)), "us-east-1")


def main(argv: list[str]) -> int:
    """`bare_engine.py DIR PLAN_JSON [--check] [--typed]`: run the floor in DIR (written from PLAN_JSON if absent;
    `--typed`: the typed floor); with --check, fail unless it registered exactly what the plan did."""
    importlib.import_module("gpu_platform.planner.process").ends_with_command()  # as the command line does
    floor_dir, plan = Path(argv[0]), json.loads(Path(argv[1]).read_text())
    if not (floor_dir / "__main__.py").exists():
        write_floor(plan, floor_dir, typed="--typed" in argv)
    if "--check" not in argv:
        run_floor(floor_dir, plan["project"], plan["stack"], region_of(plan))
        return 0
    diffs = same_registrations(plan, recorded(floor_dir, plan, region_of(plan)))
    print("\n".join(diffs[:20]) or "the floor registers what the plan did")
    return 1 if diffs else 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
