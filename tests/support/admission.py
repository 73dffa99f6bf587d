"""ValidatingAdmissionPolicies evaluated as the API server evaluates them, with cel-python.

For one request: the policy's resource rules and the binding's namespace selector decide whether it applies,
then every `matchConditions` expression must be true, `variables` are computed in order (each may read the
ones before it as `variables.<name>`), and each validation that is false denies the request with its message.
An expression that fails to evaluate raises: under `failurePolicy: Fail` the API server would deny
everything it matches, which a test must never mistake for a refusal.
"""
from __future__ import annotations

from typing import Any, Optional

import celpy

from tests.support.kueue_crds import cel_true


def _value(expression: str, bindings: dict[str, Any]) -> Any:
    from tests.support.kueue_crds import KUBERNETES_FUNCTIONS

    env = celpy.Environment()
    result = env.program(env.compile(expression), functions=KUBERNETES_FUNCTIONS).evaluate(
        {k: celpy.json_to_cel(v) for k, v in bindings.items()})
    if isinstance(result, celpy.CELEvalError):
        raise AssertionError(f"{expression}: {result}")
    return result


def _plain(value: Any) -> Any:
    """A CEL value back to JSON-like Python, so the next expression can take it as a variable."""
    if isinstance(value, celpy.celtypes.BoolType):
        return bool(value)
    if isinstance(value, (celpy.celtypes.IntType, celpy.celtypes.UintType)):
        return int(value)
    if isinstance(value, celpy.celtypes.DoubleType):
        return float(value)
    if isinstance(value, celpy.celtypes.StringType):
        return str(value)
    if isinstance(value, celpy.celtypes.MapType):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, celpy.celtypes.ListType):
        return [_plain(v) for v in value]
    return value


def selects(selector: dict, labels: dict[str, str]) -> bool:
    """A label selector (matchLabels, matchExpressions with In, NotIn, Exists, DoesNotExist) on labels."""
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        ok = {"In": key in labels and labels[key] in values, "NotIn": labels.get(key) not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}[op]
        if not ok:
            return False
    return True


def _rule_matches(rule: dict, group: str, resource: str, operation: str, namespaced: bool) -> bool:
    def has(field: str, value: str) -> bool:
        return "*" in rule[field] or value in rule[field]

    scope = rule.get("scope", "*")
    return (has("apiGroups", group) and has("resources", resource) and has("operations", operation)
            and (scope == "*" or scope == ("Namespaced" if namespaced else "Cluster")))


def applies(policy: dict, binding: dict, *, group: str, resource: str, operation: str, namespace: Optional[dict]) -> bool:
    """The policy's resource rules match the request and the binding selects its namespace."""
    rules = policy["spec"]["matchConstraints"]["resourceRules"]
    if not any(_rule_matches(r, group, resource, operation, namespace is not None) for r in rules):
        return False
    selector = binding["spec"]["matchResources"].get("namespaceSelector")
    labels = ((namespace or {}).get("metadata") or {}).get("labels") or {}
    return selector is None or selects(selector, labels)


def denials(policy: dict, obj: dict, namespace: Optional[dict], **request: Any) -> list[str]:
    """The messages the policy denies `obj` with once it applies (empty: admitted); `request` adds bindings
    such as `oldObject` and `request` (its `userInfo`)."""
    bindings: dict[str, Any] = {"object": obj, "namespaceObject": namespace, **request}
    spec = policy["spec"]
    if not all(cel_true(c["expression"], **bindings) for c in spec.get("matchConditions") or []):
        return []
    variables: dict[str, Any] = {}
    for v in spec.get("variables") or []:
        variables[v["name"]] = _plain(_value(v["expression"], {**bindings, "variables": variables}))
    return [check["message"] for check in spec["validations"]
            if not bool(_value(check["expression"], {**bindings, "variables": variables}))]
