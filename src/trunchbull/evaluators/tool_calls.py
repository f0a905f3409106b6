"""Tool calls as graders see them: raw calls (AI SDK and OpenAI shapes)
normalized to `{toolName, input, valid}` (SPEC §4), JSON equality, and the
release's tool JSON Schemas compiled into validators with the `jsonschema`
library (imported on first use)."""

from __future__ import annotations

import gc
from typing import Any

import orjson


class _JsonSchema:
    """The jsonschema library, imported on first use: it takes ~60-90 ms to
    import and only releases with tool_call_syntax cases need it."""

    def __getattr__(self, name: str) -> Any:
        from jsonschema import exceptions
        from jsonschema.validators import validator_for

        unresolvable: type[Exception]
        try:  # jsonschema >= 4.18
            from referencing.exceptions import Unresolvable as unresolvable
        except ImportError:  # pragma: no cover
            unresolvable = exceptions.RefResolutionError
        self.exceptions, self.validator_for, self.Unresolvable = exceptions, validator_for, unresolvable
        return getattr(self, name)


jsonschema_lib = _JsonSchema()


def _parse_input(value: Any) -> tuple[Any, bool]:
    """(input, valid): JSON strings are parsed; valid means a JSON object."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return None, False
    if value is None:
        return None, False
    return value, isinstance(value, dict)


def normalize_tool_call(raw: Any) -> dict:
    """One `{toolName, input, valid}` for one raw call. Accepted shapes:
    AI SDK v5+ `{toolName, input}`, AI SDK v4 `{toolName, args}`, OpenAI
    `{function: {name, arguments: "<JSON>"}}`, and `{name, input | arguments}`
    (Anthropic `tool_use` blocks, OpenAI Responses `function_call` items).
    `input` may be an object or a JSON string; unparseable input gives
    `input: null, valid: false`; an unrecognizable call gives `toolName: null`."""
    if not isinstance(raw, dict):
        return {"toolName": None, "input": None, "valid": False}
    name = raw.get("toolName")
    if isinstance(name, str):
        value = raw["input"] if "input" in raw else raw.get("args")
    else:
        function = raw.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            name = function["name"]
            value = function["arguments"] if "arguments" in function else function.get("input")
        elif isinstance(raw.get("name"), str):
            name = raw["name"]
            value = raw["input"] if "input" in raw else raw.get("arguments")
        else:
            return {"toolName": None, "input": None, "valid": False}
    parsed, valid = _parse_input(value)
    return {"toolName": name, "input": parsed, "valid": valid}


def normalize_tool_calls(raw_calls: list | None) -> list[dict]:
    if not raw_calls:
        return []
    return [normalize_tool_call(raw) for raw in raw_calls]


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality with JSON semantics: booleans are not numbers, 1 == 1.0,
    object key order does not matter."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def short(value: Any, limit: int = 80) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ToolSchemas:
    """The release's tools (name → JSON Schema), compiled once into validators."""

    def __init__(self, tools: list[dict]):
        self._schemas = {t["name"]: t.get("inputSchema") for t in tools}
        self._validators: dict[str, Any] = {}
        self._broken: dict[str, str] = {}
        self._problems: dict[tuple[str, str], str | None] = {}  # (tool, input JSON) → schema problem

    def __contains__(self, name: str) -> bool:
        return name in self._schemas

    def validator(self, name: str):
        """(validator, None) or (None, why the schema cannot be used)."""
        if name in self._validators:
            return self._validators[name], None
        if name in self._broken:
            return None, self._broken[name]
        schema = self._schemas[name]
        if not isinstance(schema, (dict, bool)):
            self._broken[name] = f"the release has no JSON Schema for tool {name!r}"
            return None, self._broken[name]
        cls = jsonschema_lib.validator_for(schema)
        try:
            cls.check_schema(schema)
        except jsonschema_lib.exceptions.SchemaError as err:
            self._broken[name] = f"the release's JSON Schema of tool {name!r} is invalid: {err.message}"
            return None, self._broken[name]
        validator = cls(schema)
        self._validators[name] = validator
        return validator, None

    def problem(self, name: str, validator, value: Any) -> str | None:
        """schema_problem(validator, value), remembered per tool and input:
        validation costs ~60-150 µs per call, and responses often repeat the
        same arguments. The key is the input's exact JSON (key order
        included), so only identical inputs share a result."""
        try:
            key = (name, orjson.dumps(value).decode())
        except (TypeError, orjson.JSONEncodeError):
            return schema_problem(validator, value)
        try:
            return self._problems[key]
        except KeyError:
            problem = self._problems[key] = schema_problem(validator, value)
            if not len(self._problems) % 1000 and not gc.isenabled():
                # jsonschema's validation errors form reference cycles (~40
                # objects per failing call); the commands pause the cyclic
                # collector, so collect the young ones here
                gc.collect(0)
            return problem


def schema_problem(validator, value: Any) -> str | None:
    error = jsonschema_lib.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"input{where}: {error.message}"
