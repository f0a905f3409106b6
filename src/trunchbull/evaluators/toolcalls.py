"""Tool calls: normalization of raw calls (AI SDK and OpenAI shapes) and the
`tool_call_syntax` evaluator (SPEC §4), which validates call inputs against the
release's tool JSON Schemas with the `jsonschema` library."""

from __future__ import annotations

from typing import Any

import orjson

from trunchbull.tool_offers import tools_by_offered_name


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


_js = _JsonSchema()


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


def _short(value: Any, limit: int = 80) -> str:
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
        cls = _js.validator_for(schema)
        try:
            cls.check_schema(schema)
        except _js.exceptions.SchemaError as err:
            self._broken[name] = f"the release's JSON Schema of tool {name!r} is invalid: {err.message}"
            return None, self._broken[name]
        validator = cls(schema)
        self._validators[name] = validator
        return validator, None

    def problem(self, name: str, validator, value: Any) -> str | None:
        """_schema_problem(validator, value), remembered per tool and input:
        validation costs ~60-150 µs per call, and responses often repeat the
        same arguments. The key is the input's exact JSON (key order
        included), so only identical inputs share a result."""
        try:
            key = (name, orjson.dumps(value).decode())
        except (TypeError, orjson.JSONEncodeError):
            return _schema_problem(validator, value)
        try:
            return self._problems[key]
        except KeyError:
            problem = self._problems[key] = _schema_problem(validator, value)
            return problem


def _schema_problem(validator, value: Any) -> str | None:
    error = _js.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"input{where}: {error.message}"


class ToolCallSyntax:
    """A prepared `tool_call_syntax` evaluator for one case. `case_tools`: the case's tools
    entries (names, or {tool, as} for a tool offered under another name): calls and plans use
    the offered names, schemas are the release tools'."""

    __slots__ = ("plans", "case_tools", "release_tool", "schemas")

    def __init__(self, spec: dict, case_tools: list, schemas: ToolSchemas):
        self.plans = spec["alternatives"]
        self.release_tool = tools_by_offered_name(case_tools)
        self.case_tools = list(self.release_tool)
        self.schemas = schemas

    def grade(self, calls: list[dict]) -> tuple[str, float | None, str, Any]:
        problems: list[str] = []
        for i, call in enumerate(calls, 1):
            name = call["toolName"]
            if name is None:
                problems.append(f"call {i} is not a recognizable tool call (no toolName, function.name or name)")
                continue
            if name not in self.release_tool:
                available = ", ".join(self.case_tools) or "none"
                problems.append(f"call {i} calls unknown tool {name!r} (the case's tools: {available})")
                continue
            if not call["valid"]:
                what = "unparseable or missing" if call["input"] is None else f"a JSON {_json_kind(call['input'])}"
                problems.append(f"call {i} ({name}): input must be a JSON object, found {what}")
                continue
            tool = self.release_tool[name]
            if tool not in self.schemas:
                return "error", None, f"tool {tool!r} is not in the release's tool set", None
            validator, broken = self.schemas.validator(tool)
            if broken:
                return "error", None, broken, None
            try:
                problem = self.schemas.problem(tool, validator, call["input"])
            except (_js.Unresolvable, _js.exceptions.RefResolutionError) as err:  # a $ref the schema cannot resolve
                return "error", None, f"the JSON Schema of tool {tool!r} cannot be used: {err}", None
            if problem:
                problems.append(f"call {i} ({name}) does not match the tool's input schema: {problem}")
        if problems:
            message = "malformed tool calls: " + "; ".join(problems)
            return "fail", 0.0, message, {"problems": problems}
        mismatches: list[str] = []
        for p, plan in enumerate(self.plans, 1):
            why = _plan_mismatch(plan, calls)
            if why is None:
                return "pass", 1.0, f"tool calls match plan {p} of {len(self.plans)}", {"plan": p}
            mismatches.append(f"plan {p}: {why}")
        got = ", ".join(c["toolName"] for c in calls) or "no calls"
        return "fail", 0.0, f"tool calls ({got}) match no plan: " + "; ".join(mismatches), {"mismatches": mismatches}


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "null" if value is None else type(value).__name__


def _plan_mismatch(plan: list[dict], calls: list[dict]) -> str | None:
    if len(plan) != len(calls):
        return f"expects {len(plan)} call{'s' if len(plan) != 1 else ''}, got {len(calls)}"
    for i, (step, call) in enumerate(zip(plan, calls), 1):
        if step["toolName"] != call["toolName"]:
            return f"call {i} should be {step['toolName']}, got {call['toolName']}"
        for key, want in (step.get("input") or {}).items():
            actual = call["input"]
            if key not in actual:
                return f"call {i} ({call['toolName']}) has no input.{key} (expected {_short(want)})"
            if not json_equal(want, actual[key]):
                return f"call {i} ({call['toolName']}) input.{key} is {_short(actual[key])}, expected {_short(want)}"
    return None
