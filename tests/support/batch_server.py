"""A local batch server for tests and benchmarks: the chat server
(chat_server.py, whose scripted replies it shares) plus the providers' batch
APIs, close enough that the pinned, unmodified AI SDK drives them:

* OpenAI: the Files API (`POST /v1/files`, multipart, purpose `batch`;
  `GET /v1/files/{id}/content`) and the Batch API (`POST /v1/batches`,
  `GET /v1/batches/{id}`, `GET /v1/batches`, `POST /v1/batches/{id}/cancel`)
  with `/v1/responses` request lines, answered in the Responses API's shape;
* Anthropic: Message Batches (`POST /v1/messages/batches`, `GET …/{id}`,
  `GET …/{id}/results`, `GET /v1/messages/batches`, `POST …/{id}/cancel`);
* Google: inline batches (`POST /v1/models/{model}:batchGenerateContent`,
  `GET /v1/batches/{id}`, `GET /v1/batches`, `POST /v1/batches/{id}:cancel`).

Each request of a batch is answered as the chat server answers a live
call: by the script whose match its first user message contains, at the
step given by its assistant turns (a `Reply` with an HTTP status is a failed
request). How each batch is processed is scripted in creation order
(`BatchScript`; the last one repeats): how long it takes, whether it expires
after its first requests, in how many pieces its results file is sent.

Gates make a kill structural: `gate = server.gate("create")` holds the next
request at that point (`create`: after the batch exists, before the reply;
`status`: before a status reply; `results`: after `gate.after` result lines;
`upload`: after the file is stored) until `gate.release` is set, and sets
`gate.reached` when a request arrives there. The server records every batch
it created, with every request line (`server.batches`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from aiohttp import web

from tests.support.chat_server import ChatServer, Recorded, Reply, _first_user_text, _text, tool_call_id


@dataclass
class BatchScript:
    processing: float = 0.0  # seconds from creation until the batch ends
    rate: float | None = None  # or: requests processed per second (the batch ends after its size / rate)
    hold: threading.Event | None = None  # ... and not before this is set
    finish: int | None = None  # only its first N requests finish: the rest expire, or are cancelled
    expire: bool = False  # the batch expires (its unfinished requests with it)
    pieces: int = 1  # the results are sent in this many writes
    cut_after: int | None = None  # the first download of the results breaks off after N lines


@dataclass
class Gate:
    after: int = 0  # `results`: lines sent before the gate
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class Item:
    custom_id: str
    body: dict
    key: str  # the conversation's first user message
    step: int
    status: str = "pending"  # succeeded | failed | expired | cancelled
    line: bytes = b""  # its line of the results


@dataclass
class Batch:
    provider: str
    id: str
    created: float  # time.time()
    items: list[Item]
    script: BatchScript
    model: str = ""
    total: int = 0
    answered: threading.Event = field(default_factory=threading.Event)
    state: str = "in_progress"  # in_progress | ended | cancelled | expired
    cancelled_at: float | None = None
    downloads: int = 0

    def ended(self) -> bool:
        return self.state != "in_progress"


def _responses_step(body: dict) -> tuple[str, int]:
    """(first user message, step) of a Responses API request body."""
    items = body.get("input") or []
    key = ""
    for item in items:
        if isinstance(item, dict) and item.get("role") == "user":
            key = _text(item.get("content"))
            break
    step, previous = 0, False
    for item in items:
        assistant = isinstance(item, dict) and (item.get("role") == "assistant" or item.get("type") == "function_call")
        if assistant and not previous:
            step += 1
        previous = assistant
    return key, step


class BatchServer(ChatServer):
    def __init__(self, default_delay: float = 0.0, port: int = 0):
        super().__init__(default_delay, port)
        self.batches: dict[str, Batch] = {}
        self.files: dict[str, bytes] = {}
        self._scripts_of_batches: list[BatchScript] = []
        self._batch_count = 0
        self._gates: dict[str, Gate] = {}
        self._serial = itertools.count(1)
        self.lose_creates = 0  # the next N creates make their batch, then answer 500 (the reply is lost)
        self.refuse_creates = 0  # the next N creates are refused (400): no batch is made

    # ------------------------------------------------------------------ scripting

    def process(self, *scripts: BatchScript) -> None:
        """How the next batches are processed, in creation order (the last repeats)."""
        with self._lock:
            self._scripts_of_batches.extend(scripts)

    def gate(self, point: str, after: int = 0) -> Gate:
        """Hold the next request at `point` (create, status, results, upload) until released."""
        gate = Gate(after)
        with self._lock:
            self._gates[point] = gate
        return gate

    def _lost(self) -> bool:
        with self._lock:
            if self.lose_creates <= 0:
                return False
            self.lose_creates -= 1
            return True

    def _refused(self) -> bool:
        with self._lock:
            if self.refuse_creates <= 0:
                return False
            self.refuse_creates -= 1
            return True

    def _take_gate(self, point: str) -> Gate | None:
        with self._lock:
            return self._gates.pop(point, None)

    async def _pass(self, gate: Gate | None) -> None:
        if gate is None:
            return
        gate.reached.set()
        while not gate.release.is_set():
            await asyncio.sleep(0.01)

    def submitted(self) -> list[tuple[str, str, Item]]:
        """(batch id, state, item) of every request of every batch created, in creation order."""
        with self._lock:
            return [(b.id, b.state, item) for b in self.batches.values() for item in b.items]

    # ------------------------------------------------------------------ batches

    def _next_script(self) -> BatchScript:
        with self._lock:
            scripts = self._scripts_of_batches
            index = min(self._batch_count, len(scripts) - 1)
            self._batch_count += 1
            return scripts[index] if scripts else BatchScript()

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._serial):06d}"

    def _create(self, provider: str, model: str, total: int, parse: Callable[[], list[Item]]) -> Batch:
        """A batch of `total` requests; `parse` gives them. Its requests are parsed and answered on a
        thread (the provider's work), and it cannot end before that is done."""
        prefix = {"openai": "batch_", "anthropic": "msgbatch_", "google": "batches/b"}[provider]
        batch = Batch(provider, self._new_id(prefix), time.time(), [], self._next_script(), model, total=total)

        def work() -> None:
            items = parse()
            for item in items:
                item.line = self._answer_item(provider, item)
            batch.items = items
            batch.answered.set()

        threading.Thread(target=work, name=f"batch-{batch.id}", daemon=True).start()
        with self._lock:
            self.batches[batch.id] = batch
        return batch

    def _reply_for(self, item: Item) -> Reply:
        reply = self._choose(item.key, item.step)
        return reply if reply is not None else Reply(content=item.key if item.step == 0 else f"step {item.step}")

    def _answer_item(self, provider: str, item: Item) -> bytes:
        """The item's result line as if it succeeded or failed (expiry and cancellation come later)."""
        reply = self._reply_for(item)
        usage = reply.usage or (max(1, len(item.key) // 4), max(1, len(reply.content or "") // 4))
        if provider == "openai":
            if reply.status != 200:
                error = reply.error_body or {
                    "error": {"message": f"scripted HTTP {reply.status}", "type": "scripted", "code": None}
                }
                line = {
                    "id": f"req_{item.custom_id}",
                    "custom_id": item.custom_id,
                    "response": {"status_code": reply.status, "request_id": "r", "body": error},
                    "error": None,
                }
                item.status = "failed"
            else:
                line = {
                    "id": f"req_{item.custom_id}",
                    "custom_id": item.custom_id,
                    "response": {"status_code": 200, "request_id": "r", "body": self._responses(reply, item, usage)},
                    "error": None,
                }
                item.status = "succeeded"
        elif provider == "anthropic":
            if reply.status != 200:
                result = {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {"type": "api_error", "message": f"scripted HTTP {reply.status}"},
                        "request_id": "r",
                    },
                }
                item.status = "failed"
            else:
                result = {
                    "type": "succeeded",
                    "message": self._anthropic(reply, item.body, usage, key=item.key, step=item.step),
                }
                item.status = "succeeded"
            line = {"custom_id": item.custom_id, "result": result}
        else:
            if reply.status != 200:
                line = {
                    "metadata": {"key": item.custom_id},
                    "error": {"code": reply.status, "message": f"scripted HTTP {reply.status}", "status": "INTERNAL"},
                }
                item.status = "failed"
            else:
                line = {"metadata": {"key": item.custom_id}, "response": self._google(reply, item.body, usage)}
                item.status = "succeeded"
        return json.dumps(line).encode()

    def _responses(self, reply: Reply, item: Item, usage: tuple[int, int]) -> dict:
        output: list[dict] = []
        if reply.content:
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{item.custom_id}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": reply.content, "annotations": []}],
                }
            )
        for index, (name, args) in enumerate(reply.tool_calls):
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{item.custom_id}_{index}",
                    "call_id": tool_call_id("call_", item.key, item.step, index),
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                    "status": "completed",
                }
            )
        incomplete = {"reason": "max_output_tokens"} if reply.finish_reason == "length" else None
        return {
            "id": f"resp_{item.custom_id}",
            "object": "response",
            "created_at": 0,
            "status": "incomplete" if incomplete else "completed",
            "model": item.body.get("model"),
            "output": output,
            "incomplete_details": incomplete,
            "error": None,
            "usage": {
                "input_tokens": usage[0],
                "output_tokens": usage[1],
                "total_tokens": sum(usage),
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }

    def _expire_or_cancel(self, batch: Batch, state: str, keep: int) -> None:
        """The batch ends `state` (expired, cancelled): its requests after the first `keep` did not finish."""
        for index, item in enumerate(batch.items):
            if index < keep:
                continue
            item.status = state
            if batch.provider == "openai":
                code = "batch_expired" if state == "expired" else "batch_cancelled"
                line: dict[str, Any] = {
                    "id": f"req_{item.custom_id}",
                    "custom_id": item.custom_id,
                    "response": None,
                    "error": {"code": code, "message": f"the batch was {state}"},
                }
            elif batch.provider == "anthropic":
                line = {
                    "custom_id": item.custom_id,
                    "result": {"type": "expired" if state == "expired" else "canceled"},
                }
            else:
                line = {
                    "metadata": {"key": item.custom_id},
                    "error": {
                        "code": 1 if state == "cancelled" else 4,
                        "message": f"the batch was {state}",
                        "status": "CANCELLED" if state == "cancelled" else "DEADLINE_EXCEEDED",
                    },
                }
            item.line = json.dumps(line).encode()
        batch.state = state

    def _advance(self, batch: Batch) -> None:
        """The batch's state now (its script decides when it ends)."""
        if batch.ended():
            return
        script = batch.script
        if not batch.answered.is_set():
            return
        if batch.cancelled_at is not None:
            self._expire_or_cancel(batch, "cancelled", script.finish or 0)
            return
        if time.time() - batch.created < self.processing_s(batch) or (
            script.hold is not None and not script.hold.is_set()
        ):
            return
        if script.expire:
            self._expire_or_cancel(batch, "expired", script.finish or 0)
        else:
            batch.state = "ended"

    def processing_s(self, batch: Batch) -> float:
        """How long the batch takes to process, from its creation."""
        rate = batch.script.rate
        return batch.script.processing if rate is None else batch.total / rate

    def _counts(self, batch: Batch) -> dict[str, int]:
        done = batch.ended()
        return {
            "total": batch.total,
            "succeeded": sum(1 for i in batch.items if done and i.status == "succeeded"),
            "failed": sum(1 for i in batch.items if done and i.status == "failed"),
            "expired": sum(1 for i in batch.items if done and i.status == "expired"),
            "cancelled": sum(1 for i in batch.items if done and i.status == "cancelled"),
            "pending": 0 if done else batch.total,
        }

    async def _bench_log(self, request: web.Request) -> web.StreamResponse:
        """`GET /v1/_bench/batches`: every batch made, with its own processing time (for bench/batch.py)."""
        with self._lock:
            batches = list(self.batches.values())
        return web.json_response(
            [
                {
                    "id": b.id,
                    "items": b.total,
                    "created": b.created,
                    "processingS": self.processing_s(b),
                    "downloads": b.downloads,
                }
                for b in batches
            ]
        )

    # ------------------------------------------------------------------ OpenAI

    def _openai_batch(self, batch: Batch) -> dict:
        self._advance(batch)
        counts = self._counts(batch)
        status = {"in_progress": "in_progress", "ended": "completed", "expired": "expired", "cancelled": "cancelled"}[
            batch.state
        ]
        if batch.cancelled_at is not None and not batch.ended():
            status = "cancelling"
        ended = batch.ended()
        failed_lines = ended and any(i.status != "succeeded" for i in batch.items)
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/responses",
            "input_file_id": f"file-in-{batch.id}",
            "completion_window": "24h",
            "status": status,
            "output_file_id": f"file-out-{batch.id}"
            if ended and any(i.status == "succeeded" for i in batch.items)
            else None,
            "error_file_id": f"file-err-{batch.id}" if failed_lines else None,
            "created_at": int(batch.created),
            "expires_at": int(batch.created) + 86400,
            "request_counts": {
                "total": counts["total"],
                "completed": counts["succeeded"],
                "failed": counts["total"] - counts["succeeded"] - counts["pending"],
            },
            "errors": None,
        }

    async def _openai_upload(self, request: web.Request) -> web.StreamResponse:
        form: dict[str, Any] = {}
        data = b""
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if getattr(part, "name", None) == "file":
                data = bytes(await part.read())  # type: ignore[union-attr]
            else:
                form[part.name] = await part.text()  # type: ignore[union-attr]
        file_id = self._new_id("file-")
        with self._lock:
            self.files[file_id] = data
        self._record(request, {"purpose": form.get("purpose"), "bytes": len(data)})
        await self._pass(self._take_gate("upload"))
        return web.json_response(
            {
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": int(time.time()),
                "filename": "batch.jsonl",
                "purpose": "batch",
                "expires_at": int(time.time()) + 172800,
            }
        )

    async def _openai_create(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self._record(request, body)
        data = self.files.get(body.get("input_file_id"))
        if data is None:
            return web.json_response(
                {"error": {"message": "no such file", "type": "invalid_request_error"}}, status=400
            )

        def parse() -> list[Item]:
            items = []
            for raw in data.splitlines():
                line = json.loads(raw)
                key, step = _responses_step(line["body"])
                items.append(Item(line["custom_id"], line["body"], key, step))
            return items

        batch = self._create("openai", "", data.count(b"\n") + (not data.endswith(b"\n")), parse)
        await self._pass(self._take_gate("create"))
        if self._lost():
            return web.json_response({"error": {"message": "upstream timeout", "type": "server_error"}}, status=500)
        return web.json_response(self._openai_batch(batch))

    async def _openai_get(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return web.json_response({"error": {"message": "no such batch"}}, status=404)
        await self._pass(self._take_gate("status"))
        return web.json_response(self._openai_batch(batch))

    async def _openai_list(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        listed = sorted(self.batches.values(), key=lambda b: b.id, reverse=True)
        listed = [b for b in listed if b.provider == "openai"]
        after = request.query.get("after")
        if after:
            listed = [b for b in listed if b.id < after]
        limit = int(request.query.get("limit", "20"))
        page = listed[:limit]
        return web.json_response(
            {
                "object": "list",
                "data": [self._openai_batch(b) for b in page],
                "has_more": len(listed) > limit,
                "first_id": page[0].id if page else None,
                "last_id": page[-1].id if page else None,
            }
        )

    async def _openai_cancel(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return web.json_response({"error": {"message": "no such batch"}}, status=404)
        if not batch.ended():
            batch.cancelled_at = time.time()
        return web.json_response(self._openai_batch(batch))

    async def _openai_content(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        file_id = request.match_info["id"]
        kind, _, batch_id = file_id.removeprefix("file-").partition("-")
        batch = self.batches.get(batch_id)
        if batch is None or not batch.ended():
            return web.json_response({"error": {"message": "no such file"}}, status=404)
        wanted = (lambda s: s == "succeeded") if kind == "out" else (lambda s: s != "succeeded")
        return await self._send_results(request, batch, [i.line for i in batch.items if wanted(i.status)])

    async def _send_results(self, request: web.Request, batch: Batch, lines: list[bytes]) -> web.StreamResponse:
        """The result lines, in the script's pieces, through the results gate, broken off once if scripted."""
        batch.downloads += 1
        lines = list(reversed(lines))  # in no particular order: not the order submitted
        script = batch.script
        response = web.StreamResponse(headers={"content-type": "application/jsonl"})
        await response.prepare(request)
        gate = self._take_gate("results")
        cut = script.cut_after if batch.downloads == 1 else None
        size = max(1, -(-len(lines) // max(1, script.pieces)))
        for start in range(0, len(lines), size):
            for index in range(start, min(start + size, len(lines))):
                if gate is not None and index == gate.after:
                    await self._pass(gate)
                    gate = None
                if cut is not None and index == cut:
                    if request.transport is not None:
                        request.transport.abort()
                    return response
                await response.write(lines[index] + b"\n")
        await response.write_eof()
        return response

    # ------------------------------------------------------------------ Anthropic

    def _anthropic_batch(self, batch: Batch) -> dict:
        self._advance(batch)
        counts = self._counts(batch)
        ended = batch.ended()
        status = "ended" if ended else ("canceling" if batch.cancelled_at is not None else "in_progress")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch.created))
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": status,
            "request_counts": {
                "processing": counts["pending"],
                "succeeded": counts["succeeded"],
                "errored": counts["failed"],
                "canceled": counts["cancelled"],
                "expired": counts["expired"],
            },
            "created_at": stamp,
            "expires_at": stamp,
            "ended_at": stamp if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.url}/messages/batches/{batch.id}/results" if ended else None,
        }

    async def _anthropic_create(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self._record(request, body)
        if self._refused():
            return web.json_response(
                {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}, status=400
            )
        requests = body.get("requests") or []

        def parse() -> list[Item]:
            items = []
            for entry in requests:
                params = entry["params"]
                messages = params.get("messages") or []
                step = sum(1 for m in messages if m.get("role") == "assistant")
                items.append(Item(entry["custom_id"], params, _first_user_text(messages), step))
            return items

        batch = self._create("anthropic", "", len(requests), parse)
        await self._pass(self._take_gate("create"))
        if self._lost():
            return web.json_response(
                {"type": "error", "error": {"type": "api_error", "message": "overloaded"}}, status=500
            )
        return web.json_response(self._anthropic_batch(batch))

    async def _anthropic_get(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return web.json_response(
                {"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}}, status=404
            )
        await self._pass(self._take_gate("status"))
        return web.json_response(self._anthropic_batch(batch))

    async def _anthropic_list(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        listed = [
            b for b in sorted(self.batches.values(), key=lambda b: b.id, reverse=True) if b.provider == "anthropic"
        ]
        after = request.query.get("after_id")
        if after:
            listed = [b for b in listed if b.id < after]
        limit = int(request.query.get("limit", "20"))
        page = listed[:limit]
        return web.json_response(
            {
                "data": [self._anthropic_batch(b) for b in page],
                "has_more": len(listed) > limit,
                "first_id": page[0].id if page else None,
                "last_id": page[-1].id if page else None,
            }
        )

    async def _anthropic_cancel(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return web.json_response(
                {"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}}, status=404
            )
        if not batch.ended():
            batch.cancelled_at = time.time()
        return web.json_response(self._anthropic_batch(batch))

    async def _anthropic_results(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        batch = self.batches.get(request.match_info["id"])
        if batch is None or not batch.ended():
            return web.json_response(
                {"type": "error", "error": {"type": "not_found_error", "message": "not ended"}}, status=404
            )
        return await self._send_results(request, batch, [i.line for i in batch.items])

    # ------------------------------------------------------------------ Google

    def _google_operation(self, batch: Batch) -> dict:
        self._advance(batch)
        counts = self._counts(batch)
        state = {
            "in_progress": "BATCH_STATE_RUNNING",
            "ended": "BATCH_STATE_SUCCEEDED",
            "expired": "BATCH_STATE_EXPIRED",
            "cancelled": "BATCH_STATE_CANCELLED",
        }[batch.state]
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": batch.model,
            "state": state,
            "createTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch.created)),
            "batchStats": {
                "requestCount": str(counts["total"]),
                "successfulRequestCount": str(counts["succeeded"]),
                "failedRequestCount": str(counts["total"] - counts["succeeded"] - counts["pending"]),
                "pendingRequestCount": str(counts["pending"]),
            },
        }
        operation: dict[str, Any] = {"name": batch.id, "metadata": metadata, "done": batch.ended()}
        if batch.ended():
            batch.downloads += 1
            metadata["output"] = {
                "inlinedResponses": {"inlinedResponses": [json.loads(i.line) for i in reversed(batch.items)]}
            }
        return operation

    async def _google_create(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self._record(request, body)
        model = request.match_info["model"]
        requests = ((body.get("batch") or {}).get("inputConfig") or {}).get("requests", {}).get("requests") or []

        def parse() -> list[Item]:
            items = []
            for entry in requests:
                req = entry["request"]
                contents = req.get("contents") or []
                step = sum(1 for c in contents if c.get("role") == "model")
                items.append(Item(entry["metadata"]["key"], req, self._conversation_key("", req), step))
            return items

        batch = self._create("google", model, len(requests), parse)
        await self._pass(self._take_gate("create"))
        if self._lost():
            return web.json_response({"error": {"code": 500, "message": "internal", "status": "INTERNAL"}}, status=500)
        return web.json_response(self._google_operation(batch))

    async def _google_get(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        batch = self.batches.get("batches/" + request.match_info["id"])
        if batch is None:
            return web.json_response(
                {"error": {"code": 404, "message": "no such batch", "status": "NOT_FOUND"}}, status=404
            )
        await self._pass(self._take_gate("status"))
        return web.json_response(self._google_operation(batch))

    async def _google_list(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        listed = [b for b in sorted(self.batches.values(), key=lambda b: b.id, reverse=True) if b.provider == "google"]
        token = request.query.get("pageToken")
        if token:
            listed = [b for b in listed if b.id < token]
        limit = int(request.query.get("pageSize", "20"))
        page = listed[:limit]
        out: dict[str, Any] = {"operations": [self._google_operation(b) for b in page]}
        if len(listed) > limit:
            out["nextPageToken"] = page[-1].id
        return web.json_response(out)

    async def _google_cancel(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        batch = self.batches.get("batches/" + request.match_info["id"])
        if batch is None:
            return web.json_response(
                {"error": {"code": 404, "message": "no such batch", "status": "NOT_FOUND"}}, status=404
            )
        if not batch.ended():
            batch.cancelled_at = time.time()
        return web.json_response({})

    # ------------------------------------------------------------------ serving

    def _record(self, request: web.Request, body: Any) -> None:
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self._lock:
            self.requests.append(
                Recorded(
                    request.path, headers, body, request.rel_url.raw_query_string, time.monotonic(), time.monotonic()
                )
            )

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=1 << 30)
        routes = [
            ("POST", "/v1/files", self._openai_upload),
            ("GET", "/v1/files/{id}/content", self._openai_content),
            ("POST", "/v1/batches", self._openai_create),
            ("GET", "/v1/batches", self._batches_list),
            ("GET", "/v1/batches/{id}", self._batches_get),
            ("POST", "/v1/batches/{id}/cancel", self._openai_cancel),
            ("POST", "/v1/batches/{id}:cancel", self._google_cancel),
            ("POST", "/v1/messages/batches", self._anthropic_create),
            ("GET", "/v1/messages/batches", self._anthropic_list),
            ("GET", "/v1/messages/batches/{id}", self._anthropic_get),
            ("GET", "/v1/messages/batches/{id}/results", self._anthropic_results),
            ("POST", "/v1/messages/batches/{id}/cancel", self._anthropic_cancel),
            ("POST", "/v1/models/{model}:batchGenerateContent", self._google_create),
            ("GET", "/v1/_bench/batches", self._bench_log),
        ]
        for method, path, handler in routes:
            app.router.add_route(method, path, handler)
        app.router.add_post("/{tail:.*}", self._handle)  # live calls, as the chat server answers them
        return app

    async def _batches_get(self, request: web.Request) -> web.StreamResponse:
        """`GET /v1/batches/{id}`: OpenAI's batches and Google's share the path."""
        if request.match_info["id"].startswith("b"):
            if ("batches/" + request.match_info["id"]) in self.batches:
                return await self._google_get(request)
        return await self._openai_get(request)

    async def _batches_list(self, request: web.Request) -> web.StreamResponse:
        if "pageSize" in request.query or "pageToken" in request.query or request.headers.get("x-goog-api-key"):
            return await self._google_list(request)
        return await self._openai_list(request)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="A local batch server (OpenAI, Anthropic, Google batch APIs).")
    parser.add_argument("--rate", type=float, default=None, help="requests each batch processes per second")
    parser.add_argument("--processing", type=float, default=0.0, help="or: seconds each batch takes")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = BatchServer(port=args.port)
    server.process(BatchScript(processing=args.processing, rate=args.rate))

    async def forever() -> None:
        print(await server.serve(), flush=True)
        await asyncio.Event().wait()

    asyncio.run(forever())


if __name__ == "__main__":
    main()
