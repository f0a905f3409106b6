"""Issue 12, one regression test per class of misbehaviour, on real
fixtures through the real CLI (each run under the fuzz reaper, which sees
any process left behind and stops a hang at its deadline)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson

from tests.conftest import EXAMPLES, REPO
from tests.fuzz.harness import check_build, fuzz_env, run_cli


def _copy(name: str, dest: Path) -> Path:
    return Path(shutil.copytree(EXAMPLES / name, dest, ignore=shutil.ignore_patterns("dist", "node_modules")))


def _build(root: Path, tmp: Path):
    (tmp / "out").mkdir(exist_ok=True)
    out = tmp / "out" / "release"
    trial = run_cli(["build", str(root), "-o", str(out), "--json"], fuzz_env(tmp / "cache"))
    return trial, out


def _errors(trial) -> list[dict]:
    return [d for d in orjson.loads(trial.stdout) if d["severity"] == "error"]


def test_special_files_never_block_and_name_their_path(tmp_path):
    """A FIFO with a discoverable name, a FIFO imported as a module, a FIFO
    tsconfig.json, and a FIFO named as a data file: each a diagnostic, no hang."""
    root = _copy("data", tmp_path / "bench")
    os.mkfifo(root / "evals" / "pipe.ts")
    os.mkfifo(root / "tsconfig.json")
    (root / "evals" / "capitals.csv").unlink()
    os.mkfifo(root / "evals" / "capitals.csv")
    trial, out = _build(root, tmp_path)
    assert check_build(trial, out) == [] and trial.returncode == 1
    found = {(d["code"], d["file"]) for d in _errors(trial)}
    assert ("not-regular-file", "evals/pipe.ts") in found
    assert ("not-regular-file", "tsconfig.json") in found
    os.unlink(root / "tsconfig.json")
    trial, out = _build(root, tmp_path)
    assert check_build(trial, out) == [] and trial.returncode == 1
    errors = _errors(trial)
    assert any(d["code"] == "data-file-path" and "named pipe" in d["message"] for d in errors), errors
    (root / "lib" / "prompts.ts").unlink()
    os.mkfifo(root / "lib" / "prompts.ts")  # imported by an eval
    trial, out = _build(root, tmp_path)
    assert check_build(trial, out) == [] and trial.returncode == 1
    errors = _errors(trial)
    assert any(d["code"] == "not-regular-file" and d["file"] == "lib/prompts.ts" for d in errors), errors


def test_prototype_pollution_cannot_break_the_inspection(tmp_path):
    root = _copy("support", tmp_path / "bench")
    module = root / "evals" / "refunds.ts"
    module.write_text(
        'Object.defineProperty(Object.prototype, "toJSON", { value: function () { return "hijack" } })\n'
        'Object.defineProperty(Array.prototype, "0", { set(v) {}, configurable: true })\n'
        "JSON.stringify = () => '{\"ok\": false}'\n" + module.read_text()
    )
    trial, out = _build(root, tmp_path)
    assert check_build(trial, out) == [] and trial.returncode == 0, trial.stderr
    reference = tmp_path / "reference"
    (reference / "out").mkdir(parents=True)
    clean, clean_out = _build(_copy("support", reference / "bench"), reference)
    assert clean.returncode == 0
    assert (out / "cases.jsonl").read_bytes() == (clean_out / "cases.jsonl").read_bytes()


def test_an_os_error_on_a_user_path_is_a_diagnostic(tmp_path):
    """A transformer source named by a 5 MiB string, a symlink loop as a
    listed module, a data file that is a directory."""
    root = _copy("data", tmp_path / "bench")
    trivia = root / "evals" / "trivia.ts"
    trivia.write_text(trivia.read_text().replace('"./trivia/questions.tsv"', '"./' + "q" * (5 << 20) + '.tsv"'))
    os.symlink("loop.ts", root / "evals" / "loop.ts")
    (root / "benchmark.config.ts").write_text(
        'export default { protocolVersion: 1, evals: ["evals/trivia.ts", "evals/loop.ts", "evals/capitals.ts"] }\n'
    )
    (root / "evals" / "capitals.csv").unlink()
    (root / "evals" / "capitals.csv").mkdir()
    trial, out = _build(root, tmp_path)
    assert check_build(trial, out) == [] and trial.returncode == 1, trial.stderr
    errors = {d["code"]: d for d in _errors(trial)}
    assert (
        "too long" in errors["transformer-source-path"]["message"]
        and len(errors["transformer-source-path"]["message"]) < 400
    )
    assert "symlink loop" in errors["config-path"]["message"]
    assert "is a directory" in errors["data-file-path"]["message"]


def _descendants(pid: int) -> list[int]:
    try:
        children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    return children + [d for c in children for d in _descendants(c)]


def _wait_for_descendant(pid: int, marker: str, limit_s: float = 300) -> None:
    """Until a process below `pid` runs with `marker` in its command line (the
    limit only keeps a broken build from hanging the suite)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        for child in _descendants(pid):
            try:
                if marker.encode() in Path(f"/proc/{child}/cmdline").read_bytes():
                    return
            except OSError:
                continue
        time.sleep(0.05)
    raise AssertionError(f"no process running {marker} appeared")


def test_no_process_is_left_behind_and_an_interrupt_cleans_up(tmp_path):
    root = _copy("data", tmp_path / "bench")
    trial, out = _build(root, tmp_path)
    assert trial.returncode == 0 and trial.leftover == [] and check_build(trial, out) == []
    # Interrupted while a transformer runs: children stopped, nothing at OUT.
    transform = root / "evals" / "trivia" / "transform.ts"
    transform.write_text("const until = Date.now() + 60_000\nwhile (Date.now() < until) {}\n" + transform.read_text())
    out = tmp_path / "interrupted" / "release"
    env = fuzz_env(tmp_path / "cache")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env["TMPDIR"] = str(scratch)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fuzz.reaper",
            str(tmp_path / "report.json"),
            "120",
            "--",
            sys.executable,
            "-m",
            "trunchbull",
            "build",
            str(root),
            "-o",
            str(out),
        ],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
    )
    _wait_for_descendant(proc.pid, "transform.mjs")  # the build is inside the transformer's busy loop
    for child in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split():
        os.kill(int(child), signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    report = orjson.loads((tmp_path / "report.json").read_bytes())
    assert report["returncode"] == 128 + signal.SIGTERM, stderr
    assert report["leftover"] == [] and not report["hung"]
    assert not out.exists() and not out.parent.exists() or not any(out.parent.iterdir())
    assert list(scratch.iterdir()) == []  # every scratch directory removed


def test_a_misspelt_tool_is_reported_beside_the_plan_error(tmp_path):
    root = _copy("support", tmp_path / "bench")
    module = root / "evals" / "refunds.ts"
    text = module.read_text()
    assert '"lookup_order"' in text or "lookup_policy" in text
    module.write_text(text.replace('tools: ["lookup_policy"', 'tools: ["lookup_polcy"', 1))
    trial, out = _build(root, tmp_path)
    assert check_build(trial, out) == [] and trial.returncode == 1
    codes = {d["code"] for d in _errors(trial)}
    assert "unknown-tool" in codes


def test_hostile_responses_files_are_diagnosed_by_line(tmp_path):
    release = tmp_path / "release"
    assert (
        run_cli(["build", str(EXAMPLES / "minimal"), "-o", str(release)], fuzz_env(tmp_path / "cache")).returncode == 0
    )
    lines = [
        b"\xff\xfe",
        b'{"caseId": "answer", "output": "4\x002"}',
        b'{"caseId": "answer", "output": NaN}',
        b'{"caseId": "answer", "caseId": "answer", "output": "42"}',
        b"[1]",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"caseId": "answer", "output": "' + b"x" * (40 << 20) + b'"}',
        b'{"caseId": "answer", "output": "4',
    ]
    responses = tmp_path / "responses.jsonl"
    responses.write_bytes(b"\n".join(lines))
    trial = run_cli(["grade", str(release), str(responses)], fuzz_env(tmp_path / "cache"))
    assert trial.returncode == 2 and "Traceback" not in trial.stderr and not trial.leftover, trial.stderr
    for number, words in enumerate(
        ["UTF-8", "control character", "NaN", "appears twice", "must be a JSON object", "depth", "limit is", "cut off"],
        1,
    ):
        assert any(line.startswith(f"{responses}:{number}:") and words in line for line in trial.stderr.splitlines()), (
            number,
            words,
            trial.stderr,
        )
