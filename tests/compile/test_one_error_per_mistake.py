"""One error per mistake: a module that does not bundle or import reports
that error alone, not the errors that only follow from it (its transformer
taken for an eval, cases naming its tools); the cause is listed first; and
independent mistakes are still all reported in one run (SPEC §3.9)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.compile.helpers import SUPPORT, build_fail
from tests.conftest import EXAMPLES, run_cli

DATA_EVALS = sorted(p.relative_to(EXAMPLES / "data").as_posix() for p in (EXAMPLES / "data/evals").glob("*.ts"))


def _copy(name: str, dest: Path) -> Path:
    shutil.copytree(EXAMPLES / name, dest, ignore=shutil.ignore_patterns("dist", "node_modules"))
    return dest


def _drop_comma_after(path: Path, key: str) -> int:
    """Remove the comma that ends the first `key: …,` line; its line number."""
    lines = path.read_text().split("\n")
    index = next(i for i, line in enumerate(lines) if re.match(rf"\s*{key}: .*,$", line))
    lines[index] = lines[index][:-1]
    path.write_text("\n".join(lines))
    return index + 1


@pytest.mark.parametrize("module", DATA_EVALS)
def test_a_comma_removed_from_an_eval_module_is_one_error(tmp_path, module):
    """examples/data, the comma after `title` dropped in each eval module
    (trivia.ts names its transformer, which lies in evals/ too)."""
    root = _copy("data", tmp_path / "data")
    _drop_comma_after(root / module, "title")
    errors = build_fail(root)
    assert [(d["code"], d["file"]) for d in errors] == [("bundle", module)], errors
    text = run_cli("check", root)
    assert text.code == 1 and "trunchbull: 1 error; nothing was written" in text.stderr


def test_an_eval_module_that_throws_on_import_hides_its_transformer(tmp_path):
    root = _copy("data", tmp_path / "data")
    module = root / "evals/trivia.ts"
    module.write_text('throw new Error("not yet")\n' + module.read_text())
    errors = build_fail(root)
    assert [(d["code"], d["file"]) for d in errors] == [("module-import", "evals/trivia.ts")], errors


def test_a_helper_in_evals_imported_by_a_broken_eval_is_not_reported(bench):
    root = bench(
        {
            "evals/shared.ts": 'export const PROMPT = "Say hi"\n',
            "evals/e.ts": 'import { PROMPT } from "./shared"\nexport default {\n  id: "e"\n  prompt: PROMPT,\n}\n',
        }
    )
    errors = build_fail(root)
    assert [(d["code"], d["file"]) for d in errors] == [("bundle", "evals/e.ts")], errors


def test_a_syntax_error_in_a_tool_module_is_one_error(tmp_path):
    """Not one more per case or eval naming its tools ("no tool module defines … known tools: none")."""
    root = _copy("support", tmp_path / "support")
    tools = root / "tools/support.ts"
    tools.write_text(tools.read_text().replace('by topic.",', 'by topic."', 1))
    errors = build_fail(root)
    assert [(d["code"], d["file"]) for d in errors] == [("bundle", "tools/support.ts")], errors


def test_a_tool_the_broken_module_does_not_spell_is_still_unknown_after_the_cause(tmp_path):
    """Two independent mistakes, two errors: the tool module's syntax error
    first (the cause of what follows), then the unknown tool it cannot define."""
    root = _copy("support", tmp_path / "support")
    tools = root / "tools/support.ts"
    tools.write_text(tools.read_text().replace('by topic.",', 'by topic."', 1))
    refunds = root / "evals/refunds.ts"
    refunds.write_text(
        refunds.read_text().replace('tools: ["lookup_policy"]', 'tools: ["lookup_policy", "find_order"]')
    )
    errors = build_fail(root)
    assert [(d["code"], d["file"]) for d in errors] == [
        ("bundle", "tools/support.ts"),
        ("unknown-tool", "evals/refunds.ts"),
    ]
    assert "tools/support.ts could not be read" in errors[1]["hint"]
    text = run_cli("check", root).stderr
    assert text.index("error[bundle]") < text.index("error[unknown-tool]")


def test_independent_mistakes_are_all_reported(bench):
    root = bench(
        {
            "evals/a.ts": 'export default { id: "a", titel: "A", prompt: "p", evaluate: { kind: "non_empty" } }\n',
            "evals/b.ts": 'export default {\n  id: "b"\n  prompt: "p",\n}\n',
            "evals/c.ts": 'export default { id: "c", prompt: "p", evaluate: { kind: "exact" } }\n',
        }
    )
    errors = build_fail(root)
    assert [(d["code"], d["file"]) for d in errors] == [
        ("bundle", "evals/b.ts"),
        ("eval-unknown-key", "evals/a.ts"),
        ("evaluator-missing-expected", "evals/c.ts"),
    ]


def test_a_broken_tool_module_beside_good_ones_hides_only_its_own_tools(tmp_path):
    root = _copy("support", tmp_path / "support")
    (root / "tools/orders.ts").write_text("export const tools = {\n  find_order: 3\n  x: 1,\n}\n")
    config = root / "benchmark.config.ts"
    config.write_text(
        config.read_text().replace('tools: ["tools/support.ts"]', 'tools: ["tools/support.ts", "tools/orders.ts"]')
    )
    refunds = root / "evals/refunds.ts"
    refunds.write_text(
        refunds.read_text().replace(
            'tools: ["lookup_policy"]', 'tools: ["lookup_policy", "find_order", "lookup_polcy"]'
        )
    )
    errors = build_fail(root)
    assert [(d["code"], d["file"]) for d in errors] == [
        ("bundle", "tools/orders.ts"),
        ("unknown-tool", "evals/refunds.ts"),
    ]
    assert "'lookup_polcy'" in errors[1]["message"] and "did you mean 'lookup_policy'?" in errors[1]["hint"]
    assert (SUPPORT / "tools/support.ts").read_text() == (root / "tools/support.ts").read_text()
