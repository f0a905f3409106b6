"""Helpers for the compiler rule tests: build a fixture benchmark with the real
CLI and assert either the exact compiled cases or the diagnostics of a failure
(exit code 1, the file, the rule's code, and that nothing was written)."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson

from tests.conftest import EXAMPLES, read_cases, run_cli

SUPPORT = EXAMPLES / "support"


def eval_module(body: str) -> str:
    return f"export default {body}\n"


def one_case(eval_id: str = "answer", **extra: str) -> str:
    """An eval module source for a one-case eval."""
    fields = ", ".join(f"{k}: {v}" for k, v in extra.items())
    return eval_module(
        f'{{ id: "{eval_id}", prompt: "Say hi", evaluate: {{ kind: "non_empty" }}'
        + (f", {fields}" if fields else "")
        + " }"
    )


def with_deps(files: dict[str, str | bytes]) -> dict[str, str | bytes]:
    """Add the support example's package.json + package-lock.json (ai, zod);
    the install is cached by lockfile hash."""
    return {
        "package.json": (SUPPORT / "package.json").read_text(),
        "package-lock.json": (SUPPORT / "package-lock.json").read_text(),
        **files,
    }


def tool_module(*names: str, description: str = "Look something up.") -> str:
    tools = ",\n".join(
        f'  {orjson.dumps(name).decode()}: tool({{ description: {orjson.dumps(description).decode()}, '
        f'inputSchema: z.object({{ topic: z.string() }}), execute: async ({{ topic }}) => ({{ topic }}) }})'
        for name in names
    )
    return f'import {{ tool }} from "ai"\nimport {{ z }} from "zod"\n\nexport const tools = {{\n{tools},\n}}\n'


def build_ok(root: Path, out: Path | None = None, *extra: str) -> tuple[list[dict], dict]:
    """Build; require success; return (compiled cases without provenance noise, manifest)."""
    out = out or root.parent / f"{root.name}-release"
    result = run_cli("build", root, "-o", out, "--json", *extra)
    assert result.code == 0, result.stdout + result.stderr
    manifest = orjson.loads((out / "release.json").read_bytes())
    return read_cases(out), manifest


def cases_of(root: Path) -> list[dict]:
    return build_ok(root)[0]


def build_fail(root: Path) -> list[dict]:
    """Build; require exit 1 with nothing written; return the error diagnostics."""
    out = root.parent / f"{root.name}-release"
    before = sorted(p.name for p in out.parent.iterdir())
    root_before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    result = run_cli("build", root, "-o", out, "--json")
    assert result.code == 1, (result.code, result.stdout, result.stderr)
    assert not out.exists(), "a failed build must write nothing at the output path"
    assert sorted(p.name for p in out.parent.iterdir()) == before, "a failed build left files beside the output"
    assert (
        sorted(str(p.relative_to(root)) for p in root.rglob("*")) == root_before
    ), "a failed build wrote into the benchmark"
    diagnostics = result.diagnostics
    assert diagnostics, "exit 1 without diagnostics"
    return [d for d in diagnostics if d["severity"] == "error"]


def expect_error(
    root: Path, code: str, file: str | None, *, message: str | None = None, line: int | None = None
) -> dict:
    """Build must fail with a diagnostic of `code` in `file` (message substring,
    line when given); returns that diagnostic."""
    errors = build_fail(root)
    matching = [d for d in errors if d["code"] == code and d["file"] == file]
    assert matching, f"no {code} diagnostic in {file}: {orjson.dumps(errors, option=orjson.OPT_INDENT_2).decode()}"
    if message is not None:
        assert any(message in d["message"] for d in matching), matching
        matching = [d for d in matching if message in d["message"]]
    if line is not None:
        assert any(d["line"] == line for d in matching), matching
    return matching[0]


def copy_example(name: str, dest: Path) -> Path:
    shutil.copytree(EXAMPLES / name, dest, ignore=shutil.ignore_patterns("dist", "node_modules"))
    return dest


def strip_source(cases: list[dict]) -> list[dict]:
    return [{k: v for k, v in c.items() if k != "source"} for c in cases]


def case(
    id: str,
    eval_id: str,
    title: str,
    prompt: str,
    evaluate: dict,
    *,
    description=None,
    systemPrompt=None,
    tools=(),
    data=None,
    source: dict,
) -> dict:
    """A compiled case exactly as cases.jsonl holds it."""
    return {
        "id": id,
        "evalId": eval_id,
        "title": title,
        "prompt": prompt,
        "description": description,
        "systemPrompt": systemPrompt,
        "tools": list(tools),
        "evaluate": evaluate,
        "data": data,
        "source": source,
    }
