"""The judge of `run` and `grade --judge` (SPEC §4.1): the grader's `Judge`
(evaluators/judging.py), answering the requests of model-graded kinds.

Each request is answered, in this order, by

1. a verdict the run directory recorded for the same sample and request key
   (rundir/judgments.py): replayed, never asked again, so that `--resume` and
   `grade --run-dir` on a directory that has them make no judge call (with
   `--rerun-errors`, a recorded verdict in error is asked again);
2. the response cache (run/cache.py), under the request's key (the judge,
   its settings and the whole prompt); only verdicts that parsed are stored;
3. the judge itself: the trusted model caller (js/run/worker.mjs, started by
   run/workers.py with the judge's provider, key and settings, no tools and
   no benchmark code), one pool of workers per judge, the run's retries,
   timeouts, reply limits and concurrency, and its budget.

Every answer that is not a replay is appended to judgments.jsonl as it
comes (a run killed while judging keeps what it had), and every answer
used is kept in `used`, for the summary's judge tokens and cost."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from trunchbull.common import lifetime
from trunchbull.evaluators.judging import JudgeAsk, JudgeReply, judged_result
from trunchbull.release.loaded import LoadedRelease
from trunchbull.run.budget import Budget
from trunchbull.run.cache import ResponseCache, as_cached
from trunchbull.run.judge_calls import classify, judge_case_id, judge_key, judge_sample, judgment, reply_of
from trunchbull.run.judge_options import JudgeModel, JudgeSetup, judge_run_options
from trunchbull.run.judge_panel import panel_reply
from trunchbull.run.samples import Sample
from trunchbull.run.settings import RunSettings
from trunchbull.run.worker_setup import spawn_pool, wait_ready
from trunchbull.rundir.judgments import JudgmentKey, JudgmentWriter
from trunchbull.rundir.repair import checked_record


class JudgingStopped(Exception):
    """Judging stopped before every request was answered (interrupted, or a budget reached)."""


class JudgeRunner:
    def __init__(
        self,
        setup: JudgeSetup,
        release: LoadedRelease,
        settings: RunSettings,
        *,
        writer: JudgmentWriter | None,
        recorded: dict[JudgmentKey, dict],
        rerun_errors: bool = False,
        cache_path: Path | None = None,
        budget: Budget | None = None,
        quiet: bool = False,
    ):
        """`settings`: the run's (the judge takes its timeouts, retries, reply
        limit and concurrency); `recorded`: the verdicts the run directory
        holds; `cache_path`: the response cache (None: --no-cache)."""
        self.setup = setup
        self.release = release
        self.settings = settings
        self.writer = writer
        self.recorded = recorded
        self.rerun_errors = rerun_errors
        self.cache_path = cache_path
        self.budget = budget
        self.quiet = quiet
        self.used: list[dict] = []  # the judgment line of every answer the grading used, in ask order
        self.calls = 0  # requests sent to a judge (not replayed, not cached)
        self.stopped = False  # a budget refused a request
        self._identities = {text: judge.spec.identity() for text, judge in setup.judges.items()}

    @property
    def model(self) -> str:
        return next(iter(self.setup.judges))

    def run_json(self) -> dict:
        return self.setup.to_json()

    def summary(self) -> list[dict]:
        return self.setup.summary()

    def answer(self, asks: Sequence[JudgeAsk]) -> list[JudgeReply]:
        # one item per (ask, judge of its panel): answered alike, then a panel's replies combined
        items: list[tuple[JudgeAsk, JudgeModel, str]] = []
        panels: list[range] = []
        for ask in asks:
            panel = self.setup.panel_for(ask.request.judge)
            panels.append(range(len(items), len(items) + len(panel)))
            for judge in panel:
                items.append((ask, judge, judge_key(judge, self._identities[judge.text], ask.request)))
        replies: list[JudgeReply | None] = [None] * len(items)
        lines: list[dict | None] = [None] * len(items)
        pending: list[tuple[int, JudgeModel, str]] = []
        for i, (ask, judge, key) in enumerate(items):
            line = self.recorded.get((ask.case_id, ask.repeat, key))
            if line is not None and not (self.rerun_errors and line["outcome"] == "error"):
                replies[i], lines[i] = reply_of(line, replayed=True), line
            else:
                pending.append((i, judge, key))
        if pending:
            log = self.writer.judgment_log() if self.writer is not None else None
            cache = ResponseCache(self.cache_path) if self.cache_path is not None else None
            item_asks = [ask for ask, _judge, _key in items]
            try:
                pending = self._from_cache(item_asks, pending, cache, log, replies, lines)
                if pending:
                    self._ask(item_asks, pending, cache, log, replies, lines)
            finally:
                if cache is not None:
                    cache.close()
                if log is not None:
                    log.close()
        self.used = [line for line in lines if line is not None]
        if any(reply is None for reply in replies):
            self.stopped = True
            raise JudgingStopped("a budget was reached before every judge request was sent")
        out = []
        for ask, span in zip(asks, panels):
            answers = [reply for reply in replies[span.start : span.stop] if reply is not None]
            out.append(answers[0] if len(answers) == 1 else panel_reply(ask.request, answers))
        return out

    def _answered(self, ask: JudgeAsk, judge: JudgeModel, key: str, row: dict, log) -> tuple:
        """`log`: the judgment log of the run (or comparison) directory, None outside one."""
        reply = classify(row)
        line = judgment(ask, judge, key, row, judged_result(ask.request, reply))
        if log is not None:
            log.append_record(line)
        return reply_of(line, replayed=False), line

    def _from_cache(self, asks, pending, cache, log, replies, lines) -> list[tuple[int, JudgeModel, str]]:
        if cache is None:
            return pending
        hits = cache.lookup([key for _i, _judge, key in pending])
        left = []
        for i, judge, key in pending:
            stored = hits.get(key)
            if stored is None:
                left.append((i, judge, key))
                continue
            ask = asks[i]
            name = judge_case_id(i)
            row = checked_record(as_cached(stored, name, 0), name, 0, judge.price is not None)[1]
            replies[i], lines[i] = self._answered(ask, judge, key, row, log)
        if log is not None:
            log.flush()
        return left

    def _ask(self, asks, pending, cache, log, replies, lines) -> None:
        by_judge: dict[str, list[tuple[int, str]]] = {}
        for i, judge, key in pending:
            by_judge.setdefault(judge.text, []).append((i, key))
        if not self.quiet:
            print(f"trunchbull: asking the judge about {len(pending):,} sample(s)", file=sys.stderr)
        for text, items in by_judge.items():
            self._ask_one(self.setup.judges[text], [(i, key, asks[i]) for i, key in items], cache, log, replies, lines)

    def _ask_one(self, judge: JudgeModel, items, cache, log, replies, lines) -> None:
        samples = [judge_sample(i, ask) for i, _key, ask in items]
        by_k = {sample.k: (key, ask) for sample, (_i, key, ask) in zip(samples, items)}
        secret = judge.spec.secret
        secret_bytes = secret.encode() if secret else None
        options = judge_run_options(judge, self.settings)
        per_token = judge.price.per_token() if judge.price is not None else None
        with lifetime.scratch_dir("trunchbull-judge-") as workdir:
            pool = spawn_pool(self.release, options, workdir, len(samples), per_token, with_tools=False)
            try:
                wait_ready(pool, judge.spec, flag="--judge")

                def on_record(sample: Sample, kind: str | None, record: bytes) -> None:
                    if secret_bytes and secret_bytes in record:
                        record = record.replace(secret_bytes, b"[redacted]")
                    record, row = checked_record(record, sample.case_id, sample.repeat, pool.priced)
                    key, ask = by_k[sample.k]
                    self.calls += 1
                    replies[sample.k], lines[sample.k] = self._answered(ask, judge, key, row, log)
                    if self.budget is not None:
                        self.budget.settle(sample, record)
                    if cache is not None and row["error"] is None and not row.get("repaired"):
                        if lines[sample.k]["outcome"] != "error":  # a verdict that parsed
                            cache.put(key, record)

                def after_records() -> None:
                    if log is not None:
                        log.flush()

                admit = self.budget.admit if self.budget is not None else None
                pool.run(samples, on_record, after_records=after_records, admit=admit)
            except BaseException:
                pool.kill_all()
                raise
            pool.close()
