"""SPEC §5: the same inputs give a byte-identical release (directory and
tar) on every build and at any checkout path."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.compile.helpers import with_deps
from tests.conftest import run_cli, write_tree

FILES = {
    "benchmark.config.ts": 'export default { protocolVersion: 1, version: "1.0.0" }\n',
    "lib/prompts.ts": 'export const SYSTEM = "Answer briefly."\n',
    "evals/refunds.ts": 'import { SYSTEM } from "../lib/prompts"\n'
    'export default { id: "refunds", title: "Refund policy", systemPrompt: SYSTEM, tools: ["lookup_policy"],\n'
    '  evaluate: { kind: "contains", expected: "30 days" },\n'
    '  cases: [{ id: "refunds.standard", prompt: "What is the window?", data: { n: 1 } }] }\n',
    "evals/custom.ts": 'import { SYSTEM } from "../lib/prompts"\n'
    'export default { id: "custom", prompt: "p", systemPrompt: SYSTEM,\n'
    '  evaluate: ({ output }) => ({ passed: output.includes("ok"), score: 1 }) }\n',
    "evals/qa.ts": 'export default { id: "qa", evaluate: { kind: "exact" }, cases: "./qa.csv" }\n',
    "evals/qa.csv": "id,prompt,expected\nqa.1,Two plus two?,4\nqa.2,\"Quoted, with comma\",x\n",
    "evals/lines.ts": 'export default { id: "lines", cases: "./lines.jsonl" }\n',
    "evals/lines.jsonl": '{"id": "lines.1", "prompt": "p", "evaluate": {"kind": "gsm8k", "expected": 41}}\n',
    "tools/support.ts": 'import { tool } from "ai"\nimport { z } from "zod"\n'
    'export const tools = {\n  lookup_policy: tool({ description: "Look up a policy.",\n'
    '    inputSchema: z.object({ topic: z.string() }), execute: async ({ topic }) => ({ topic }) }),\n}\n',
}


def snapshot(release: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(release).as_posix(): (p.read_bytes() if p.is_file() else b"", p.stat().st_mode)
        for p in sorted(release.rglob("*"))
    }


def build(root: Path, out: Path) -> None:
    result = run_cli("build", root, "-o", out, "--tar")
    assert result.code == 0, result.stderr


def test_builds_are_byte_identical_across_rebuilds_and_checkout_paths(tmp_path):
    # Same directory name at different depths: with no configured title the root's own name is an input.
    first = write_tree(tmp_path / "a" / "bench", with_deps(FILES))
    second = tmp_path / "elsewhere" / "deeper" / "bench"
    second.parent.mkdir(parents=True)
    shutil.copytree(first, second)

    build(first, tmp_path / "r1")
    build(first, tmp_path / "r2")
    build(second, tmp_path / "r3")

    reference = snapshot(tmp_path / "r1")
    assert len([n for n in reference if n.startswith("modules/") and n.endswith(".mjs")]) == 2
    assert snapshot(tmp_path / "r2") == reference
    assert snapshot(tmp_path / "r3") == reference
    tar = (tmp_path / "r1.tar").read_bytes()
    assert (tmp_path / "r2.tar").read_bytes() == tar
    assert (tmp_path / "r3.tar").read_bytes() == tar


def test_build_from_another_working_directory_and_relative_root(tmp_path):
    root = write_tree(tmp_path / "bench", with_deps(FILES))
    build(root, tmp_path / "abs")
    result = run_cli("build", "bench", "-o", "rel", "--tar", cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert snapshot(tmp_path / "rel") == snapshot(tmp_path / "abs")
    assert (tmp_path / "rel.tar").read_bytes() == (tmp_path / "abs.tar").read_bytes()


def test_any_input_change_changes_the_digest(tmp_path):
    root = write_tree(tmp_path / "bench", with_deps(FILES))
    build(root, tmp_path / "before")
    (root / "lib/prompts.ts").write_text('export const SYSTEM = "Answer in one word."\n')
    build(root, tmp_path / "after")
    import orjson

    before = orjson.loads((tmp_path / "before/release.json").read_bytes())
    after = orjson.loads((tmp_path / "after/release.json").read_bytes())
    assert before["digest"] != after["digest"]
    assert before["inputs"]["lib/prompts.ts"] != after["inputs"]["lib/prompts.ts"]
