"""SPEC §3.1 / seed "Repository layout and discovery": entrypoints without
explicit arrays, what discovery skips, helpers, and the repository root."""

from __future__ import annotations

import pytest

from tests.compile.helpers import build_ok, case, expect_error, one_case, tool_module, with_deps
from tests.conftest import write_tree


def single(eval_id: str, module: str) -> dict:
    return case(eval_id, eval_id, eval_id, "Say hi", {"kind": "non_empty"}, source={"module": module})


def test_smallest_repository_is_one_eval_module(bench):
    root = bench({"evals/answer.ts": one_case()})
    assert build_ok(root)[0] == [single("answer", "evals/answer.ts")]


def test_discovery_is_recursive_over_all_module_suffixes_in_bytewise_order(bench):
    root = bench(
        {
            "evals/b.mjs": one_case("b"),
            "evals/a.js": one_case("a"),
            "evals/a/x.ts": one_case("ax"),
            "evals/a-b.mts": one_case("ab"),
            "evals/Z.ts": one_case("z"),
        }
    )
    cases, manifest = build_ok(root)
    # bytewise: "Z" < "a-b" ('-' 0x2d) < "a.js" ('.' 0x2e) < "a/x" ('/' 0x2f) < "b"
    assert [e["module"] for e in manifest["evals"]] == [
        "evals/Z.ts",
        "evals/a-b.mts",
        "evals/a.js",
        "evals/a/x.ts",
        "evals/b.mjs",
    ]
    assert [c["id"] for c in cases] == ["z", "ab", "a", "ax", "b"]


@pytest.mark.parametrize(
    "skipped",
    [
        "evals/answer.test.ts",
        "evals/answer.spec.mjs",
        "evals/types.d.ts",
        "evals/types.d.mts",
        "evals/.hidden.ts",
        "evals/.dir/x.ts",
        "evals/node_modules/pkg/index.js",
        "evals/notes.md",
        "evals/data.json",
    ],
)
def test_discovery_skips_tests_declarations_dotfiles_node_modules_and_non_modules(bench, skipped):
    # The skipped file would be an error if it were compiled (no default export, invalid id).
    root = bench({"evals/answer.ts": one_case(), skipped: 'export default { id: "BAD" }\n'})
    cases, manifest = build_ok(root)
    assert [e["module"] for e in manifest["evals"]] == ["evals/answer.ts"]
    assert cases == [single("answer", "evals/answer.ts")]


def test_no_eval_module_found_is_an_error(bench):
    root = bench(
        {"evals/README.md": "nothing here\n", "benchmark.config.ts": "export default { protocolVersion: 1 }\n"}
    )
    expect_error(root, "no-evals", "benchmark.config.ts")


def test_no_eval_module_found_without_config(bench):
    root = bench({"other/answer.ts": one_case()})
    expect_error(root, "no-evals", None)


def test_discovered_helper_imported_by_an_eval_is_not_an_entrypoint(bench):
    root = bench(
        {
            "evals/shared.ts": 'export const PROMPT = "Say hi"\n',
            "evals/answer.ts": 'import { PROMPT } from "./shared"\n'
            'export default { id: "answer", prompt: PROMPT, evaluate: { kind: "non_empty" } }\n',
        }
    )
    cases, manifest = build_ok(root)
    assert cases == [single("answer", "evals/answer.ts")]
    assert [e["module"] for e in manifest["evals"]] == ["evals/answer.ts"]
    assert {"evals/answer.ts", "evals/shared.ts"} <= set(manifest["inputs"])


def test_discovered_module_without_default_export_that_nobody_imports_is_an_error(bench):
    root = bench({"evals/answer.ts": one_case(), "evals/orphan.ts": 'export const x = 1\n'})
    diag = expect_error(root, "eval-no-default", "evals/orphan.ts")
    assert "evals/" in diag["hint"]


def test_listed_eval_without_default_export_is_an_error(bench):
    root = bench(
        {
            "evals/answer.ts": 'export const x = 1\n',
            "benchmark.config.ts": 'export default { protocolVersion: 1, evals: ["evals/answer.ts"] }\n',
        }
    )
    expect_error(root, "eval-no-default", "evals/answer.ts")


def test_tools_are_discovered_under_tools_dir(bench):
    root = bench(
        with_deps(
            {
                "evals/answer.ts": one_case(tools='["lookup"]'),
                "tools/b.ts": tool_module("lookup"),
                "tools/a.test.ts": "export const tools = 1\n",
            }
        )
    )
    cases, manifest = build_ok(root)
    assert [t["name"] for t in manifest["tools"]] == ["lookup"]
    assert manifest["tools"][0]["module"] == "tools/b.ts"
    assert cases[0]["tools"] == ["lookup"]


def test_directories_resolve_beside_the_config(tmp_path):
    repo = write_tree(
        tmp_path / "repo",
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "evals/not-mine.ts": 'export default { id: "BAD" }\n',
            "bench/benchmark.config.ts": "export default { protocolVersion: 1 }\n",
            "bench/evals/answer.ts": one_case(),
        },
    )
    cases, _ = build_ok(repo / "bench", tmp_path / "out")
    assert cases == [single("answer", "evals/answer.ts")]


def test_local_imports_may_reach_shared_code_inside_the_repository_root(tmp_path):
    repo = write_tree(
        tmp_path / "repo",
        {
            "pants.toml": "",
            "shared/prompts.ts": 'export const PROMPT = "Shared prompt"\n',
            "benchmarks/one/evals/answer.ts": 'import { PROMPT } from "../../../shared/prompts"\n'
            'export default { id: "answer", prompt: PROMPT, evaluate: { kind: "non_empty" } }\n',
        },
    )
    cases, manifest = build_ok(repo / "benchmarks/one", tmp_path / "out")
    assert cases == [
        case("answer", "answer", "answer", "Shared prompt", {"kind": "non_empty"}, source={"module": "evals/answer.ts"})
    ]
    assert "../../shared/prompts.ts" in manifest["inputs"]


def test_local_imports_outside_the_repository_root_are_rejected(tmp_path):
    write_tree(tmp_path, {"outside/prompts.ts": 'export const PROMPT = "Outside"\n'})
    repo = write_tree(
        tmp_path / "repo",
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "bench/evals/answer.ts": 'import { PROMPT } from "../../../outside/prompts"\n'
            'export default { id: "answer", prompt: PROMPT, evaluate: { kind: "non_empty" } }\n',
        },
    )
    expect_error(repo / "bench", "import-outside-repo", "evals/answer.ts", line=1)


def test_discovered_symlink_resolving_outside_the_root_is_rejected(bench, tmp_path):
    import os

    outside = tmp_path / "outside.ts"
    outside.write_text(one_case("outside"))
    root = bench({"evals/answer.ts": one_case()})
    os.symlink(outside, root / "evals" / "link.ts")
    expect_error(root, "symlink-outside-root", "evals/link.ts")


def test_symlink_inside_the_root_is_fine(bench):
    import os

    root = bench({"lib/real.ts": one_case("real"), "evals/answer.ts": one_case()})
    os.symlink(root / "lib" / "real.ts", root / "evals" / "link.ts")
    cases, _ = build_ok(root)
    assert [c["id"] for c in cases] == ["answer", "real"]
