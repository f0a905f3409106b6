"""One judge request as the trusted model caller runs it, and its reply as
the grader reads it (SPEC §4.1):

* the request's identity, `key`: SHA-256 of the canonical JSON of the judge
  (provider, model, base URL; a local file by its content), its call
  settings and the whole rendered prompt, with the kind's own settings. It
  keys the response cache and the recorded verdicts (rundir/judgments.py);
* the request as a worker sample (run/workers.py): the prompt, no tools,
  one step; the worker sends it like any sample, with the run's retries,
  timeouts and reply limits;
* the worker's record read as a reply: a failed call is `judge-failed`
  (its own kind kept as `cause`), a reply cut at `--max-response-bytes`
  `judge-truncated`, a content-filter stop `judge-refused`; otherwise the
  text, which the kind's `decide` reads (`judge-unparsable` when it holds no
  grade);
* the judgment line of rundir/judgments.py."""

from __future__ import annotations

import hashlib


from trunchbull.evaluators.judging import JudgeAsk, JudgeReply, JudgeRequest
from trunchbull.evaluators.result import Result
from trunchbull.release.canonical import canonical_json
from trunchbull.run.judge_options import JudgeModel
from trunchbull.run.samples import Sample

FAILED, REFUSED, TRUNCATED = "judge-failed", "judge-refused", "judge-truncated"


def prompt_sha256(messages: tuple[dict, ...]) -> str:
    return hashlib.sha256(canonical_json(list(messages))).hexdigest()


def judge_key(judge: JudgeModel, identity: dict, request: JudgeRequest) -> str:
    """The request's identity (`identity`: the judge's ModelSpec.identity(), computed once)."""
    document = {
        "judge": identity,
        "settings": judge.settings,
        "messages": list(request.messages),
        "request": request.settings,
    }
    return hashlib.sha256(canonical_json(document)).hexdigest()


def judge_case_id(k: int) -> str:
    """The worker's name of judge request k (never a case ID: those start with a letter or digit)."""
    return f"#judge{k}"


def judge_sample(k: int, ask: JudgeAsk) -> Sample:
    """The request as a worker's sample: a system message (when the first is
    one) and the rest as the prompt (one user message as its text)."""
    messages = list(ask.request.messages)
    system = messages.pop(0)["content"] if messages and messages[0].get("role") == "system" else None
    prompt: object = messages[0]["content"] if len(messages) == 1 and messages[0].get("role") == "user" else messages
    case = {"id": judge_case_id(k), "prompt": prompt, "systemPrompt": system, "tools": []}
    return Sample(k, case, 0, None)


def classify(row: dict) -> JudgeReply:
    """A worker's record (checked: rundir/repair.py) as the judge's reply, without details."""
    finish = row.get("finishReason")
    error = row.get("error")
    if error is not None:
        return JudgeReply(None, f"its call failed ({error['kind']}): {error['message']}", None, finish, FAILED)
    if "output-truncated" in (row.get("repaired") or ()):
        return JudgeReply(None, "its reply was longer than --max-response-bytes and was cut", None, finish, TRUNCATED)
    if finish == "content-filter":
        return JudgeReply(None, "it refused (its provider stopped it for content)", None, finish, REFUSED)
    return JudgeReply(row.get("output") or "", None, None, finish)


def judgment(ask: JudgeAsk, judge: JudgeModel, key: str, row: dict, result: Result) -> dict:
    """The judgments.jsonl line of an answered request (`row`: the worker's
    record, `result`: what the sample is graded from it)."""
    outcome, score, message, details = result
    error = details.get("error") if isinstance(details, dict) else None
    if error is not None and row.get("error") is not None:
        error = {**error, "cause": row["error"]["kind"]}
    grade = details.get("grade") if isinstance(details, dict) else None
    return {
        "caseId": ask.case_id,
        "repeat": ask.repeat,
        "evalId": ask.eval_id,
        "judge": judge.text,
        "key": key,
        "promptSha256": prompt_sha256(ask.request.messages),
        "reply": row.get("output") or "",
        "finishReason": row.get("finishReason"),
        "grade": grade,
        "outcome": outcome,
        "score": score,
        "error": error,
        "usage": row.get("usage"),
        "cost": row.get("cost"),
        "latencyMs": row.get("latencyMs"),
        "attempts": row.get("attempts"),
        "cached": bool(row.get("cached")),
        "repaired": row.get("repaired"),
    }


def reply_of(line: dict, replayed: bool) -> JudgeReply:
    """The reply a judgment line records, with the details the grader keeps."""
    details = {
        "model": line["judge"],
        "grade": line["grade"],
        "usage": line["usage"],
        "cost": line["cost"],
        "attempts": line["attempts"],
        "cached": line["cached"],
        "replayed": replayed,
    }
    error = line["error"]
    if error is not None and error.get("kind") != "judge-unparsable":
        return JudgeReply(None, error.get("message"), details, line["finishReason"], error["kind"])
    return JudgeReply(line["reply"], None, details, line["finishReason"])
