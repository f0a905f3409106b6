"""A run's records and their grading (SPEC §8.5): the records parsed from
the very bytes the log got, rather than read back, and graded by the same
grader as `trunchbull grade`."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from trunchbull.evaluators.judging import Judge
from trunchbull.grading.grader import Graded, Grader
from trunchbull.grading.grader import ToGrade
from trunchbull.grading.responses import Response
from trunchbull.release.loaded import LoadedRelease
from trunchbull.run.samples import Sample
from trunchbull.rundir.layout import RESPONSES
from trunchbull.rundir.log import read_records


def _graded_sample(sample: Sample, row: dict | None) -> ToGrade:
    """What the grader is given for a sample and its record (None: no record)."""
    if row is None:
        return ToGrade(sample.case, None, sample.repeat)
    output = row.get("output")
    response = Response(
        0,
        output if type(output) is str else "",
        row.get("toolCalls") or [],
        row.get("finishReason"),
        row.get("usage"),
    )
    return ToGrade(sample.case, response, sample.repeat, row.get("error") or None)


class RunGrading:
    """The run's records and their grading, from the very bytes the log got
    rather than read back (on a 25,000-sample run, ~0.2 s less between the
    last sample and the summary). With a model called over the network
    (`as_recorded`), each round of records is parsed and graded as it
    arrives, while the run waits on the model: ~0.35 s less again. Otherwise
    (echo, replay, a local model: the cores are busy with the samples)
    everything is graded at the end. Records a resumed run read from the log
    are graded at the end too."""

    BATCH = 64  # records graded together while the run goes on

    def __init__(
        self, release: LoadedRelease, run_dir: Path, done: dict, as_recorded: bool, judge: Judge | None = None
    ):
        """`judge`: what answers the requests of model-graded kinds (run/judge_runner.py), when any is graded."""
        self.log_path = run_dir / RESPONSES
        self.grader = Grader(release, f"no record of this sample in {RESPONSES}", judge)
        self.as_recorded = as_recorded
        self.records: dict[tuple[str, int], dict] = dict(done)
        self.written: dict[tuple[str, int], bytes] = {}  # not parsed yet
        self.pending: list[tuple[int, ToGrade]] = []
        self.unreadable = False  # a record that does not parse: the log's own reader says what is wrong

    def add(self, sample: Sample, record: bytes, row: dict | None = None) -> None:
        """A record as logged (`row`: its parsed value, when the caller has it)."""
        key = (sample.case_id, sample.repeat)
        if row is None and not self.as_recorded:
            self.written[key] = record
            return
        if row is None:
            try:
                row = orjson.loads(record)
            except orjson.JSONDecodeError:
                self.unreadable = True
                return
        self.records[key] = row
        if self.as_recorded:
            self.pending.append((sample.k, _graded_sample(sample, row)))

    def grade_some(self) -> None:
        if len(self.pending) >= self.BATCH:
            self.grader.add(self.pending)
            self.pending = []

    def finish(self, samples: list[Sample]) -> tuple[Graded, dict]:
        """Every sample graded (those without a record too), and the records."""
        records, grader = self.records, self.grader
        loads = orjson.loads
        try:
            for key, record in self.written.items():
                records[key] = loads(record)
        except orjson.JSONDecodeError:
            self.unreadable = True
        if self.unreadable:
            recorded = read_records(self.log_path)
            for damage in recorded.damaged:  # its sample is graded `error`: no record
                print(f"trunchbull: warning: {damage.describe(self.log_path)}", file=sys.stderr)
            records = recorded.records
            grader = Grader(grader.release, grader.missing_message, grader.judge)
        else:
            grader.add(self.pending)
        graded = grader.rows
        grader.add(
            (sample.k, _graded_sample(sample, records.get((sample.case_id, sample.repeat))))
            for sample in samples
            if sample.k not in graded
        )
        return grader.finish(), records
