"""A tool_call_syntax plan checked against the tool's input schema at compile time.

A plan step's `input` lists values that the call's input must have, and the call's input must
also be valid against the tool's JSON Schema. So a plan value that the schema rejects (a key
the schema does not allow, a value of the wrong type or out of range) can never be matched: the
plan fails for every model. `plan_input_problems` finds such keys, and only when it is certain:
it reasons key by key, which is exact for the schemas tools have (an object with `properties`,
maybe `patternProperties` and `additionalProperties`), and says nothing about a schema whose
root combines subschemas (allOf, anyOf, if/then, $ref, …), where one key's validity may depend
on another's."""

from __future__ import annotations

import re
from typing import Any

from trunchbull.evaluators.tool_calls import jsonschema_lib

# Root keywords under which one key's validity can depend on the others (or on the whole input).
_NOT_KEY_BY_KEY = frozenset(
    (
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
        "dependentSchemas",
        "dependencies",
        "unevaluatedProperties",
    )
)


def _subschemas(schema: dict, key: str) -> list[Any] | None:
    """The subschemas a value at `key` must satisfy, or None when that cannot be said."""
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    if not isinstance(properties, dict) or not isinstance(patterns, dict):
        return None
    applying = [properties[key]] if key in properties else []
    for pattern, sub in patterns.items():
        try:
            if re.search(pattern, key):
                applying.append(sub)
        except re.error:  # an ECMA-262 pattern Python cannot read: no verdict
            return None
    if not applying and "additionalProperties" in schema:
        applying.append(schema["additionalProperties"])
    return applying


def plan_input_problems(schema: object, plan_input: dict) -> list[tuple[str, str]]:
    """(key, why) for every key of `plan_input` that no input valid against `schema` can have."""
    if not isinstance(schema, dict) or _NOT_KEY_BY_KEY.intersection(schema):
        return []
    try:
        cls = jsonschema_lib.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema_lib.exceptions.SchemaError:
        return []  # an invalid schema is reported when grading (an error, not a fail)
    validator = cls(schema)
    problems = []
    for key, value in plan_input.items():
        subs = _subschemas(schema, key)
        if subs is None:
            continue
        for sub in subs:
            if sub is False:
                allowed = sorted(schema.get("properties", {}))
                problems.append(
                    (key, "the schema allows no such key" + (f" (it takes {', '.join(allowed)})" if allowed else ""))
                )
                break
            try:
                error = jsonschema_lib.exceptions.best_match(validator.descend(value, sub))
            except (jsonschema_lib.Unresolvable, jsonschema_lib.exceptions.RefResolutionError):
                break  # a $ref that cannot be resolved: no verdict
            if error is not None:
                where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
                problems.append((key, f"{where.lstrip('.') + ': ' if where else ''}{error.message}"))
                break
    return problems
