"""The fuzz properties: a mutated fixture benchmark built by the real CLI,
and a mutated responses file graded by it, each checked against the
invariants of harness.py. Used by tests/fuzz/test_fuzz.py (the fixed CI
profile) and bench/fuzz.py (long runs)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from hypothesis import given

from tests.fuzz.harness import check_build, fuzz_env, problems_of, run_cli
from tests.fuzz.mutations import apply, apply_responses, benchmark_case, copy_base, responses_mutation
from hypothesis import strategies as st

_work: list[Path] = []
GOOD_RESPONSES = b'{"caseId": "answer", "output": "42"}\n'
GRADE_EXIT_2 = ("cannot be graded", "no response for", "trunchbull: error:")


def work_dir() -> Path:
    """One scratch directory per process: a shared dependency cache, and the release graded by the responses fuzz."""
    if not _work:
        path = Path(tempfile.mkdtemp(prefix="trunchbull-fuzz-"))
        atexit.register(shutil.rmtree, path, True)
        _work.append(path)
    return _work[0]


def env() -> dict[str, str]:
    return fuzz_env(work_dir() / "cache")


def fuzz_build(case: tuple) -> list[str]:
    """Build one mutated benchmark; the invariants it broke."""
    base, changes = case
    with tempfile.TemporaryDirectory(dir=work_dir(), prefix="trial-") as tmp:
        root = copy_base(base, Path(tmp) / "bench")
        sockets: list = []
        try:
            for change in changes:
                apply(root, change, sockets)
            (Path(tmp) / "out").mkdir()
            out = Path(tmp) / "out" / "release"
            trial = run_cli(["build", str(root), "-o", str(out), "--json"], env())
            return check_build(trial, out)
        finally:
            for sock in sockets:
                sock.close()


def graded_release() -> Path:
    release = work_dir() / "graded-release"
    if not release.exists():
        trial = run_cli(
            ["build", str(Path(__file__).resolve().parents[2] / "examples" / "minimal"), "-o", str(release)], env()
        )
        assert trial.returncode == 0, trial.stderr
    return release


def fuzz_grade(changes: list) -> list[str]:
    """Grade one mutated responses file; the invariants it broke."""
    data = GOOD_RESPONSES
    for change in changes:
        data = apply_responses(data, change)
    release = graded_release()
    with tempfile.TemporaryDirectory(dir=work_dir(), prefix="grade-") as tmp:
        responses = Path(tmp) / "responses.jsonl"
        responses.write_bytes(data)
        trial = run_cli(
            ["grade", str(release), str(responses), "-o", str(Path(tmp) / "results.jsonl"), "--json"], env()
        )
    found = problems_of(trial)
    if trial.returncode == 2 and any(reason in trial.stderr for reason in GRADE_EXIT_2):
        found = [f for f in found if not f.startswith("exit 2")]
    return found


@given(case=benchmark_case())
def build_property(case):
    problems = fuzz_build(case)
    assert not problems, "\n".join(problems)


@given(changes=st.lists(responses_mutation(), min_size=1, max_size=3))
def grade_property(changes):
    problems = fuzz_grade(changes)
    assert not problems, "\n".join(problems)
