"""A build whose user code prints without end until its deadline (a
transformer, an eval module's top level): the build's memory stays bounded,
its diagnostic names the module and quotes the head and tail of the output
with how much was not shown, and nothing is written.

Memory is measured from outside while the real CLI runs (tests/support/
process_watch.py): the CLI's own peak, and the peaks of all the build's
processes summed (an upper bound of their peak together). Before the output
was capped, each transformer run queued what it printed in its own memory
(~530 MB after 6 s, ~1.1 GB for the build)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson

from tests.compile.transformer.helpers import REPO, transformer_bench
from tests.conftest import write_tree
from tests.support.process_watch import ProcessWatch

MIB = 1 << 20
CLI_PEAK_BOUND = 128 * MIB
BUILD_PEAK_BOUND = 512 * MIB
SHOWN = re.compile(r"; its output \(([\d,]+) bytes\):\n(.*)\n    \[… ([\d,]+) bytes not shown …\]\n(.*)", re.S)


def build_watched(root: Path, env: dict[str, str]) -> tuple[int, list[dict], ProcessWatch, Path]:
    out = root.parent / f"{root.name}-release"
    before = sorted(p.name for p in out.parent.iterdir())
    proc = subprocess.Popen(
        [sys.executable, "-m", "trunchbull", "build", str(root), "-o", str(out), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO / "src"), **env},
    )
    with ProcessWatch(proc) as watch:
        stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 1, stderr.decode()
    assert not out.exists(), "a failed build must write nothing at the output path"
    assert sorted(p.name for p in out.parent.iterdir()) == before, "a failed build left files beside the output"
    return proc.returncode, orjson.loads(stdout), watch, out


def assert_bounded(watch: ProcessWatch) -> None:
    assert watch.root.peak_kib * 1024 < CLI_PEAK_BOUND, f"the CLI peaked at {watch.root.peak_kib} KiB"
    total = sum(s.peak_kib for s in watch.seen.values()) * 1024
    assert total < BUILD_PEAK_BOUND, [(s.cmdline[:80], s.peak_kib) for s in watch.seen.values()]


def shown_output(message: str) -> tuple[int, str, int, str]:
    """(total bytes, head shown, bytes not shown, tail shown) of a diagnostic's output excerpt."""
    match = SHOWN.search(message)
    assert match, message
    total, head, hidden, tail = match.groups()
    return int(total.replace(",", "")), head, int(hidden.replace(",", "")), tail


def test_a_transformer_printing_without_end_is_stopped_at_its_deadline_within_bounded_memory(tmp_path):
    module = """export default { name: "chatty", transform() {
  console.log("reading the sources")
  const line = "x".repeat(1_500_000)
  for (let i = 0; ; i++) console.log(`attempt ${i} ` + line)
} }
"""
    root = transformer_bench(tmp_path / "b", module)
    _code, diagnostics, watch, _out = build_watched(root, {"TRUNCHBULL_TRANSFORM_DEADLINE": "5"})
    (diag,) = [d for d in diagnostics if d["severity"] == "error"]
    assert diag["code"] == "transformer-deadline" and diag["file"] == "evals/gen/transform.ts"
    assert diag["message"].startswith("transformer evals/gen/transform.ts: stopped at the deadline")
    total, head, hidden, tail = shown_output(diag["message"])
    assert head.startswith("    reading the sources\n    attempt 0 xxxx") and head.endswith("…")
    assert tail.startswith("    …xxxx") and set(tail.removeprefix("    …")) <= {"x"}
    assert hidden == total - 1024 - 2048  # the first 1 KiB and the last 2 KiB shown, the rest counted
    assert total > 64 * 1024  # it printed more than the build keeps
    assert_bounded(watch)
    runs = watch.running("compile/transform.mjs")
    assert runs, "no transformer run was seen"


def test_a_module_whose_import_prints_without_end_is_stopped_at_its_deadline_within_bounded_memory(tmp_path):
    root = write_tree(
        tmp_path / "b",
        {
            "benchmark.config.ts": 'export default { protocolVersion: 1, title: "t" }\n',
            "evals/fine.ts": 'export default { id: "fine", prompt: "Say hi", evaluate: { kind: "non_empty" } }\n',
            "evals/refunds.ts": """console.log("loading the refund policies")
for (let i = 0; ; i++) console.log(`retrying the refund service (attempt ${i})`)
export default { id: "refunds", prompt: "p", evaluate: { kind: "non_empty" } }
""",
        },
    )
    _code, diagnostics, watch, _out = build_watched(root, {"TRUNCHBULL_INSPECT_DEADLINE": "5"})
    (diag,) = [d for d in diagnostics if d["severity"] == "error"]
    assert diag["code"] == "module-import" and diag["file"] == "evals/refunds.ts"
    assert diag["message"].startswith(
        "importing the module did not finish within 5 s (limit: TRUNCHBULL_INSPECT_DEADLINE); its output ("
    )
    assert "TRUNCHBULL_INSPECT_DEADLINE=SECONDS" in diag["hint"]
    total, head, hidden, tail = shown_output(diag["message"])
    head_lines = head.split("\n")
    assert head_lines[:3] == [
        "    loading the refund policies",
        "    retrying the refund service (attempt 0)",
        "    retrying the refund service (attempt 1)",
    ]
    tail_lines = [line.removeprefix("    ") for line in tail.split("\n")]
    attempts = [
        int(re.fullmatch(r"retrying the refund service \(attempt (\d+)\)", line).group(1)) for line in tail_lines
    ]
    assert attempts == list(range(attempts[0], attempts[0] + len(attempts)))  # the last lines, whole and in order
    assert attempts[0] > 1000  # (far past the head)
    shown_bytes = sum(len(line.removeprefix("    ")) + 1 for line in head_lines + tail.split("\n"))
    assert hidden == total - shown_bytes
    assert_bounded(watch)
