"""A local model server for tests and benchmarks, on 127.0.0.1, speaking the
real HTTP protocols the AI SDK providers use:

* OpenAI chat completions: `POST …/chat/completions` (openai, openai-compatible);
* Anthropic messages: `POST …/messages`;
* Google Generative AI: `POST …/models/MODEL:generateContent`.

Replies are scripted per conversation: a script is chosen by a substring of
the conversation's first user message, and its steps by the number of
assistant turns already in the request (so the model's second step, after a
tool result, gets the script's second reply). A step may fail a number of
times first (429 with retry-after, 500, 400, a delay, a dropped connection).
Without a script, the reply echoes the last user message, after
`default_delay` seconds. Every request is recorded (path, headers, JSON body).

A judge (`judge(rule)`) answers the requests of model-graded kinds by a rule
on their content: the rule gets the first user message's text (and, if it
takes two arguments, the model the request names: a panel's judges at one
endpoint) and returns the step to answer with (a Reply, or a list for
successive attempts), or None for a request that is not the judge's; its
replies come before any script.

A reply may also misbehave the ways real servers and gateways do (`Reply`'s
last fields): a body sent as given bytes (invalid JSON, an HTML error page,
a lone surrogate escape, bytes that are not UTF-8, a very large body), a
body cut off before its announced length, a gzip body that expands to far
more than it weighs, a connection reset (RST), tool-call arguments given as
raw text (unparsable, nested 20,000 deep) or as an object where the
protocol wants a string.

In a test: `with ChatServer() as server: … server.url …` (an asyncio loop on
a thread). For a benchmark: `python tests/support/chat_server.py --delay 0.05`
prints its base URL and serves until killed.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import hashlib
import inspect
import itertools
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from aiohttp import web


@dataclass
class Reply:
    """One answer of the server: text and/or tool calls, or an HTTP error."""

    content: str | None = None
    tool_calls: list[tuple[str, dict | str]] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error_body: dict | None = None
    delay: float = 0.0
    finish_reason: str | None = None
    usage: tuple[int, int] | None = None  # (input, output) tokens
    drop: bool = False  # close the connection without answering
    hold: threading.Event | None = None  # answered only once this is set (a test decides when)
    reset: bool = False  # reset the connection (RST) without answering
    raw: bytes | None = None  # the body, as these bytes (content-type JSON), instead of the protocol's shape
    truncate: int | None = None  # announce the body's length, send only this many bytes of it, close
    gzip_bomb: int | None = None  # a gzip body (content-encoding gzip) that expands to this many zero bytes
    arguments_as_object: bool = False  # OpenAI tool calls' arguments as a JSON object instead of a string


@functools.lru_cache(maxsize=4)
def gzip_bomb(expanded: int) -> bytes:
    """A gzip stream of `expanded` zero bytes: one 16 MiB member, repeated
    (a gzip file may hold many members; decoders expand them all)."""
    member_size = 16 << 20
    member = gzip.compress(bytes(member_size), compresslevel=9, mtime=0)
    whole, rest = divmod(expanded, member_size)
    return member * whole + (gzip.compress(bytes(rest), mtime=0) if rest else b"")


Step = Reply | list[Reply]  # a list: the step's replies to successive attempts (the last one repeats)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any
    query: str = ""  # the request's query string, as sent
    started: float = 0.0  # time.monotonic() when it arrived
    ended: float | None = None  # ... and when it was answered


def tool_call_id(prefix: str, key: str, step: int, index: int) -> str:
    """A tool call's id: the same for the same conversation, step and call, live or in a batch."""
    return prefix + hashlib.sha256(f"{key}\0{step}\0{index}".encode()).hexdigest()[:16]


def _first_user_text(messages: list[dict]) -> str:
    for message in messages:
        if message.get("role") == "user":
            return _text(message.get("content"))
    return ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


class ChatServer:
    def __init__(self, default_delay: float = 0.0, port: int = 0):
        self.default_delay = default_delay
        self.port = port
        self.requests: list[Recorded] = []
        self._scripts: list[tuple[str, list[Step]]] = []
        self._judge: Callable[[str], Step | None] | None = None
        self._attempts: dict[tuple[str, int], int] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ scripting

    def script(self, match: str, steps: list[Step]) -> None:
        """Conversations whose first user message contains `match` get these steps."""
        with self._lock:
            self._scripts.append((match, steps))

    def judge(self, rule: Callable[[str], Step | None]) -> None:
        """Requests whose first user message `rule` answers (not None) get that step."""
        with self._lock:
            self._judge = rule

    def _judged(self, key: str, model: Any = None) -> Reply | None:
        with self._lock:
            rule = self._judge
        if rule is None:
            return None
        chosen = rule(key, model) if len(inspect.signature(rule).parameters) == 2 else rule(key)
        if isinstance(chosen, list):
            with self._lock:
                attempt = self._attempts.get((f"judge:{model}:{key}", 0), 0)
                self._attempts[(f"judge:{model}:{key}", 0)] = attempt + 1
            chosen = chosen[min(attempt, len(chosen) - 1)]
        return chosen

    def received(self, match: str | None = None) -> list[Recorded]:
        """The recorded requests (whose first user message contains `match`)."""
        with self._lock:
            requests = list(self.requests)
        if match is None:
            return requests
        return [r for r in requests if match in self._conversation_key(r.path, r.body)]

    def peak_in_flight(self, match: str | None = None) -> int:
        """The most requests (whose first user message contains `match`) that were being answered at once."""
        events = []
        for r in self.received(match):
            events += [(r.started, 1), (r.ended if r.ended is not None else float("inf"), -1)]
        peak = current = 0
        for _, change in sorted(events, key=lambda e: (e[0], e[1])):  # an end before a start at the same time
            current += change
            peak = max(peak, current)
        return peak

    def open_connections(self) -> int:
        """Connections still open, counting one whose request is still being handled (aiohttp
        forgets a connection once its handler has finished): 0 after a killed client means
        every request it sent is recorded or never will be."""
        assert self._loop is not None and self._runner is not None
        server = self._runner.server
        assert server is not None

        async def count() -> int:
            return len(server.connections)

        return asyncio.run_coroutine_threadsafe(count(), self._loop).result(10)

    def _conversation_key(self, path: str, body: Any) -> str:
        if not isinstance(body, dict):
            return ""
        if "contents" in body:  # Google
            for content in body["contents"]:
                if content.get("role") == "user":
                    return "".join(p.get("text", "") for p in content.get("parts", []))
            return ""
        return _first_user_text(body.get("messages") or [])

    def _choose(self, key: str, step: int, model: Any = None) -> Reply | None:
        judged = self._judged(key, model) if step == 0 else None
        if judged is not None:
            return judged
        with self._lock:
            for match, steps in self._scripts:
                if match in key:
                    if step >= len(steps):
                        return Reply(content=f"(script {match!r} has no step {step})")
                    chosen = steps[step]
                    if isinstance(chosen, list):
                        attempt = self._attempts.get((match, step), 0)
                        self._attempts[(match, step)] = attempt + 1
                        chosen = chosen[min(attempt, len(chosen) - 1)]
                    return chosen
        return None

    # ------------------------------------------------------------------ protocols

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        started = time.monotonic()
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        headers = {k.lower(): v for k, v in request.headers.items()}
        recorded = Recorded(request.path, headers, body, request.rel_url.raw_query_string, started)
        with self._lock:
            self.requests.append(recorded)
        try:
            return await self._reply(request, body)
        finally:
            recorded.ended = time.monotonic()

    async def _reply(self, request: web.Request, body: Any) -> web.StreamResponse:
        path = request.path
        if not isinstance(body, dict):
            return web.json_response({"error": {"message": "expected a JSON object"}}, status=400)
        if path.endswith("/chat/completions"):
            messages = body.get("messages") or []
            step = sum(1 for m in messages if m.get("role") == "assistant")
            last = _text(next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), ""))
            key = _first_user_text(messages)
            shape = functools.partial(self._openai, key=key, step=step)
            return await self._answer(request, self._choose(key, step, body.get("model")), last, body, shape)
        if path.endswith("/messages"):
            messages = body.get("messages") or []
            step = sum(1 for m in messages if m.get("role") == "assistant")
            last = _text(next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), ""))
            key = _first_user_text(messages)
            shape = functools.partial(self._anthropic, key=key, step=step)
            return await self._answer(request, self._choose(key, step), last, body, shape)
        if ":generateContent" in path:
            contents = body.get("contents") or []
            step = sum(1 for c in contents if c.get("role") == "model")
            users = [c for c in contents if c.get("role") == "user"]
            last = "".join(p.get("text", "") for p in users[-1].get("parts", [])) if users else ""
            key = self._conversation_key(path, body)
            return await self._answer(request, self._choose(key, step), last, body, self._google)
        return web.json_response({"error": {"message": f"no such endpoint {path}"}}, status=404)

    async def _answer(
        self, request: web.Request, reply: Reply | None, last_user: str, body: dict, shape
    ) -> web.StreamResponse:
        if reply is None:
            reply = Reply(content=last_user, delay=self.default_delay)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        while reply.hold is not None and not reply.hold.is_set():
            await asyncio.sleep(0.01)  # polled: a thread blocked on the event would outlive the server
        if reply.drop and request.transport is not None:
            request.transport.abort()  # the connection ends without an answer
            return web.Response(status=500)
        if reply.reset and request.transport is not None:
            sock = request.transport.get_extra_info("socket")
            if sock is not None:  # SO_LINGER 0: closing sends RST, not FIN
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            request.transport.abort()
            return web.Response(status=500)
        if reply.raw is not None or reply.truncate is not None or reply.gzip_bomb is not None:
            return await self._send_bytes(request, reply, body, last_user, shape)
        if reply.status != 200:
            error = reply.error_body or {"error": {"message": f"scripted HTTP {reply.status}", "type": "scripted"}}
            return web.json_response(error, status=reply.status, headers=reply.headers)
        usage = reply.usage or (max(1, len(last_user) // 4), max(1, len(reply.content or "") // 4))
        return web.json_response(shape(reply, body, usage), headers=reply.headers)

    async def _send_bytes(
        self, request: web.Request, reply: Reply, body: dict, last_user: str, shape
    ) -> web.StreamResponse:
        """A reply whose bytes are the test's, not the protocol's."""
        headers = {"content-type": "application/json", **reply.headers}
        if reply.gzip_bomb is not None:
            payload = await asyncio.get_running_loop().run_in_executor(None, gzip_bomb, reply.gzip_bomb)
            headers["content-encoding"] = "gzip"
        elif reply.raw is not None:
            payload = reply.raw
        else:
            usage = reply.usage or (1, 1)
            payload = json.dumps(shape(reply, body, usage)).encode()
        if reply.truncate is None:
            return web.Response(body=payload, status=reply.status, headers=headers)
        response = web.StreamResponse(status=reply.status, headers=headers)
        response.content_length = len(payload)
        await response.prepare(request)
        await response.write(payload[: reply.truncate])
        if request.transport is not None:
            request.transport.close()  # the rest never comes
        return response

    def _openai(self, reply: Reply, body: dict, usage: tuple[int, int], key: str = "", step: int = 0) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": tool_call_id("call_", key, step, index),
                    "type": "function",
                    "function": {
                        "name": name,
                        # a str: the arguments' text as given (unparsable, nested deeper than json.dumps goes)
                        "arguments": args if isinstance(args, str) or reply.arguments_as_object else json.dumps(args),
                    },
                }
                for index, (name, args) in enumerate(reply.tool_calls)
            ]
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
        }

    def _anthropic(self, reply: Reply, body: dict, usage: tuple[int, int], key: str = "", step: int = 0) -> dict:
        content: list[dict] = [{"type": "text", "text": reply.content}] if reply.content else []
        content += [
            {"type": "tool_use", "id": tool_call_id("toolu_", key, step, index), "name": name, "input": args}
            for index, (name, args) in enumerate(reply.tool_calls)
        ]
        return {
            "id": f"msg_{next(self._ids)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": reply.finish_reason or ("tool_use" if reply.tool_calls else "end_turn"),
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        }

    def _google(self, reply: Reply, body: dict, usage: tuple[int, int]) -> dict:
        parts: list[dict] = [{"text": reply.content}] if reply.content else []
        parts += [{"functionCall": {"name": name, "args": args}} for name, args in reply.tool_calls]
        return {
            "candidates": [
                {
                    "content": {"parts": parts, "role": "model"},
                    "finishReason": reply.finish_reason or "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": usage[0],
                "candidatesTokenCount": usage[1],
                "totalTokenCount": sum(usage),
            },
        }

    # ------------------------------------------------------------------ serving

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/{tail:.*}", self._handle)
        return app

    async def serve(self) -> str:
        self._runner = web.AppRunner(self._app(), access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, backlog=1024)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # the ephemeral port chosen
        return self.url

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "ChatServer":
        started = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self.serve())
            started.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="chat-server", daemon=True)
        self._thread.start()
        started.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        loop = self._loop
        if loop is None:
            return
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="A local chat-completions server that echoes after a delay.")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ChatServer(default_delay=args.delay, port=args.port)

    async def forever() -> None:
        print(await server.serve(), flush=True)
        await asyncio.Event().wait()

    asyncio.run(forever())


if __name__ == "__main__":
    main()
