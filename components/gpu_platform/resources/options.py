"""What a component does with the ResourceOptions its caller gives it.

Children are parented to the component, so Pulumi already hands them its providers, its protection and
its aliases. Two things Pulumi does not pass on are done here: every child also waits for what the caller
made the component wait for (`depends_on`), and a child the library protects by default (a node group in
prod) takes the caller's `protect` instead whenever the caller set one.
"""
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional, TypeVar, Union

import pulumi

from gpu_platform.facts import component_types

T = TypeVar("T")


def child(parent: pulumi.Resource, caller: Optional[pulumi.ResourceOptions], *,
          depends_on: Sequence[pulumi.Resource] = (), **options: Any) -> pulumi.ResourceOptions:
    """Options for one child of `parent`: after the caller's `depends_on` and this child's own."""
    given = caller.depends_on if caller is not None else None
    if isinstance(given, pulumi.Resource):
        given = [given]
    if given is None or isinstance(given, list) and all(isinstance(d, pulumi.Resource) for d in given):
        # The common forms, joined here: Pulumi's merge copies both options (and their hooks) for every child.
        return pulumi.ResourceOptions(parent=parent, depends_on=[*(given or ()), *depends_on] or None, **options)
    own = pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on) or None, **options)
    # Pulumi's merge concatenates depends_on in every other form a caller may give it (an Output, a mixed list)
    return pulumi.ResourceOptions.merge(pulumi.ResourceOptions(depends_on=given), own)


def protect(caller: Optional[pulumi.ResourceOptions], default: bool) -> bool:
    """The caller's `protect` when it set one, else the library's default for this child."""
    return caller.protect if caller is not None and caller.protect is not None else default


def named(cluster_name: pulumi.Input[str], build: Callable[[str], T]) -> Union[T, pulumi.Output[T]]:
    """`build(cluster_name)` now when the name is a plain string, else once the Output resolves: physical
    names follow the cluster's, which another resource may decide."""
    if isinstance(cluster_name, str):
        return build(cluster_name)
    later: pulumi.Output[str] = pulumi.Output.from_input(cluster_name)  # the target picks from_input's overload
    return later.apply(build)


def caller_provider(caller: Optional[pulumi.ResourceOptions], package: str) -> Optional[pulumi.ProviderResource]:
    """The provider the caller gave for `package` ("aws", "kubernetes"): its `provider` when that is one of
    the package's, else its `providers` entry for it."""
    if caller is None:
        return None
    if caller.provider is not None and caller.provider.package == package:
        return caller.provider
    given = caller.providers
    if isinstance(given, Mapping):
        return given.get(package)
    return next((p for p in given or [] if p.package == package), None)


def formerly(caller: Optional[pulumi.ResourceOptions], component: str) -> pulumi.ResourceOptions:
    """The caller's options plus an alias for each type the public `component` was registered as before
    (facts/component_types.py): stacks made then keep it, and everything under it, in place."""
    aliases = [pulumi.Alias(type_=t) for t in component_types.FORMER[component]]
    return pulumi.ResourceOptions.merge(pulumi.ResourceOptions(aliases=aliases), caller)


def kubernetes(args: Mapping[str, Any]) -> dict[str, Any]:
    """`provider=` for a child in the cluster when the Args name a `k8s_provider`; else nothing, and the
    child inherits the provider the component's own options give."""
    return {"provider": args["k8s_provider"]} if args.get("k8s_provider") is not None else {}
