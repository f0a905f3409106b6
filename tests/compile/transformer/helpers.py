"""Helpers for transformer tests: write a benchmark with one transformer eval
and run the real CLI on it."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson

from tests.conftest import write_tree  # noqa: F401 - re-exported for the transformer tests

REPO = Path(__file__).resolve().parents[3]

EVAL = """export default {{
  id: "gen",
  evaluate: {{ kind: "non_empty" }},
  cases: {{ transformer: "./gen/transform.ts", sources: {sources} }},
}}
"""


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    out: Path

    @property
    def diagnostics(self) -> list[dict]:
        return orjson.loads(self.stdout) if self.code != 0 else orjson.loads(self.stdout)["diagnostics"]

    def codes(self) -> list[str]:
        return [d["code"] for d in self.diagnostics if d["severity"] == "error"]

    def only(self, code: str) -> dict:
        found = [d for d in self.diagnostics if d["code"] == code]
        assert found, f"no {code} diagnostic in {self.diagnostics}\n{self.stderr}"
        return found[0]


def transformer_bench(
    root: Path,
    transform: str,
    sources: dict[str, str | bytes] | None = None,
    source_paths: dict[str, str] | None = None,
    extra: dict[str, str | bytes] | None = None,
) -> Path:
    """A benchmark with evals/gen.ts whose cases come from evals/gen/transform.ts
    (the given module text) over the given source files (under evals/gen/)."""
    sources = {"data": "one\n"} if sources is None else sources
    paths = source_paths if source_paths is not None else {name: f"./gen/{name}.txt" for name in sources}
    files: dict[str, str | bytes] = {
        "benchmark.config.ts": "export default { protocolVersion: 1, title: \"t\" }\n",
        "evals/gen.ts": EVAL.format(sources=orjson.dumps(paths).decode()),
        "evals/gen/transform.ts": transform,
    }
    for name, content in sources.items():
        files[f"evals/gen/{name}.txt"] = content
    files.update(extra or {})
    return write_tree(root, files)


def build(root: Path, env: dict[str, str] | None = None, timeout: float = 300) -> Run:
    out = root.parent / f"{root.name}-release"
    merged = dict(os.environ)
    merged["PYTHONPATH"] = str(REPO / "src")
    merged.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "trunchbull", "build", str(root), "-o", str(out), "--json"],
        capture_output=True,
        text=True,
        env=merged,
        timeout=timeout,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr, out)


def failed(run: Run, code: str, file: str | None = None) -> dict:
    """Assert the build failed with `code` (at `file`) and wrote nothing."""
    assert run.code == 1, f"exit {run.code}\n{run.stdout}\n{run.stderr}"
    assert not run.out.exists(), "a failed build must write nothing"
    diag = run.only(code)
    if file is not None:
        assert diag["file"] == file, diag
    return diag


def read_cases(release: Path) -> list[dict]:
    return [orjson.loads(line) for line in (release / "cases.jsonl").read_bytes().splitlines()]
