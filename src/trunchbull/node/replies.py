"""The shapes of the replies that Node processes running user code send
(inspection, transformer runs, evaluator workers), checked before any field
is used. The Node side encodes replies with built-ins captured before user
code runs, but user code shares the process and could still write to the
channel: a reply of the wrong shape must become a diagnostic, never an
AttributeError."""

from __future__ import annotations

from typing import TypeGuard


def _is_int(value: object) -> bool:
    return type(value) is int


def _strings(value: object) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


def walk_result_ok(value: object) -> bool:
    """json_walk's { value, functions: [path], errors: [{ path, problem }] }."""
    return (
        type(value) is dict
        and "value" in value
        and _strings(value.get("functions"))
        and type(value.get("errors")) is list
        and all(
            type(e) is dict and type(e.get("path")) is str and type(e.get("problem")) is str for e in value["errors"]
        )
    )


def _tool_ok(tool: object) -> bool:
    return (
        type(tool) is dict
        and type(tool.get("name")) is str
        and _strings(tool.get("problems"))
        and type(tool.get("description", "")) is str
        and type(tool.get("inputSchema", {})) is dict
    )


def inspection_ok(reply: object, kind: str) -> TypeGuard[dict]:
    """One module's inspection (js/compile/inspect.mjs)."""
    if type(reply) is not dict or type(reply.get("ok")) is not bool:
        return False
    if not reply["ok"]:
        return type(reply.get("importError")) is str
    if not _strings(reply.get("exports")):
        return False
    if kind == "tool":
        tools = reply.get("tools", [])
        return type(reply.get("toolsProblem", "")) is str and type(tools) is list and all(_tool_ok(t) for t in tools)
    return "default" not in reply or walk_result_ok(reply["default"])


def transform_response_ok(reply: object) -> TypeGuard[dict]:
    """A transformer run's first line (js/compile/transform.mjs): streamed header,
    failure, or one-line result."""
    if type(reply) is not dict or type(reply.get("ok")) is not bool:
        return False
    name = reply.get("name")
    if name is not None and type(name) is not str:
        return False
    if "stream" in reply:
        return (
            reply["ok"] is True
            and reply["stream"] in ("lines", "digest")
            and _is_int(reply.get("count"))
            and reply["count"] >= 0
        )
    if not reply["ok"]:
        return (
            type(reply.get("stage")) is str
            and _strings(reply.get("problems", []))
            and type(reply.get("error", "")) is str
            and _is_int(reply.get("count", 0))
        )
    count = reply.get("count")
    return walk_result_ok(reply.get("result")) and (count is None or _is_int(count))


def trailer_ok(reply: object) -> TypeGuard[dict]:
    return (
        type(reply) is dict
        and reply.get("end") is True
        and type(reply.get("sha256")) is str
        and type(reply.get("violation", "")) is str
    )


def evaluator_answer_ok(reply: object) -> TypeGuard[dict]:
    """One custom-evaluator answer (js/grade/evaluator_worker.mjs)."""
    if type(reply) is not dict or not _is_int(reply.get("i")) or reply.get("outcome") not in ("pass", "fail", "error"):
        return False
    score, message, ms = reply.get("score"), reply.get("message"), reply.get("ms")
    return (
        (score is None or type(score) in (int, float))
        and (message is None or type(message) is str)
        and type(ms) in (int, float)
        and "details" in reply
    )
