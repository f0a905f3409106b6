"""A custom evaluator that prints without end, through the real
`trunchbull grade`: every case still gets its right outcome, the worker's
log is a pipe kept within its cap in memory (no file grows on disk), and
neither the CLI nor the workers grow with what was printed (measured from
outside: tests/support/process_watch.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import write_tree
from tests.evaluators.conftest import REPO, cli, read_jsonl, write_jsonl
from tests.support.process_watch import ProcessWatch

MIB = 1 << 20

EVAL = """const line = "x".repeat(1_500_000)
export default {
  id: "chatty",
  cases: [
    { id: "quiet", prompt: "p", data: { mode: "quiet" } },
    { id: "spam", prompt: "p", data: { mode: "spam" } },
    { id: "loud-yes", prompt: "p", data: { mode: "loud" } },
    { id: "loud-no", prompt: "p", data: { mode: "loud" } },
    { id: "exit", prompt: "p", data: { mode: "exit" } },
    { id: "after", prompt: "p", data: { mode: "quiet" } },
  ],
  evaluate({ output, caseData }: { output: string; caseData: { mode: string } }) {
    if (caseData.mode === "spam") for (let i = 0; ; i++) console.log(`spam ${i} ` + line)
    if (caseData.mode === "loud") for (let i = 0; i < 100; i++) console.log(line)  // 150 MB, then an answer
    if (caseData.mode === "exit") {
      console.error("e".repeat(200_000))
      console.error("last words before exit 5")
      process.exit(5)
    }
    return output === "yes"
  },
}
"""


def test_a_custom_evaluator_printing_without_end_grades_every_case_within_bounded_memory(tmp_path):
    root = write_tree(
        tmp_path / "bench",
        {"benchmark.config.ts": 'export default { protocolVersion: 1, title: "t" }\n', "evals/chatty.ts": EVAL},
    )
    release = tmp_path / "release"
    built = cli("build", root, "-o", release)
    assert built.code == 0, built.stdout + built.stderr
    rows = [
        {"caseId": "quiet", "output": "yes"},
        {"caseId": "spam", "output": "yes"},
        {"caseId": "loud-yes", "output": "yes"},
        {"caseId": "loud-no", "output": "no"},
        {"caseId": "exit", "output": "yes"},
        {"caseId": "after", "output": "no"},
    ]
    out = tmp_path / "results.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "trunchbull", "grade", str(release), str(write_jsonl(tmp_path / "r.jsonl", rows))]
        + ["-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    with ProcessWatch(proc) as watch:
        _stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr.decode()  # (errors are said, not a failed grade)
    assert "2 case(s) ended in error" in stderr.decode()
    results = {r["caseId"]: r for r in read_jsonl(out)}
    outcomes = {case: r["outcome"] for case, r in results.items()}
    assert outcomes == {
        "quiet": "pass",
        "spam": "error",
        "loud-yes": "pass",
        "loud-no": "fail",
        "exit": "error",
        "after": "fail",
    }
    assert results["spam"]["message"].startswith("the evaluator did not finish within the 5 s deadline")
    crash = results["exit"]["message"]
    assert crash.startswith("the evaluator worker crashed: the process exited with code 5; its output:\n")
    assert crash.endswith("eeee\nlast words before exit 5") and "bytes not shown" in crash
    assert results["exit"]["details"]["exitCode"] == 5
    # what the evaluators printed went through pipes, read within the cap
    workers = watch.running("grade/evaluator_worker.mjs")
    node = [s for s in workers if not s.cmdline.startswith(("unshare", "/usr/bin/unshare"))]
    assert node, "no evaluator worker was seen"
    assert all(s.outputs <= {"pipe"} for s in workers), [(s.cmdline[:60], s.outputs) for s in workers]
    assert all(s.largest_output_file == 0 for s in watch.seen.values())
    assert max(s.peak_kib for s in node) * 1024 < 256 * MIB
    assert watch.root.peak_kib * 1024 < 128 * MIB, f"the CLI peaked at {watch.root.peak_kib} KiB"
