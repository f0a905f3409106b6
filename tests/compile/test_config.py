"""SPEC §3.1 / seed "Config": the static benchmark.config module and its keys."""

from __future__ import annotations

import os

import pytest

from tests.compile.helpers import build_ok, case, expect_error, one_case

EVAL = {"evals/answer.ts": one_case()}


def answer_case(title: str = "answer") -> dict:
    return case("answer", "answer", title, "Say hi", {"kind": "non_empty"}, source={"module": "evals/answer.ts"})


def test_config_is_optional_title_defaults_to_root_directory_name(bench):
    root = bench(EVAL, name="my-bench")
    cases, manifest = build_ok(root)
    assert cases == [answer_case()]
    assert manifest["title"] == "my-bench" and manifest["version"] is None


@pytest.mark.parametrize("suffix", [".ts", ".mts", ".js", ".mjs"])
def test_config_module_suffixes_are_accepted(bench, suffix):
    root = bench(
        {**EVAL, f"benchmark.config{suffix}": 'export default { protocolVersion: 1, title: "T", version: "2.0" }\n'}
    )
    cases, manifest = build_ok(root)
    assert cases == [answer_case()]
    assert (manifest["title"], manifest["version"]) == ("T", "2.0")


def test_two_config_modules_are_an_error(bench):
    root = bench(
        {
            **EVAL,
            "benchmark.config.ts": "export default { protocolVersion: 1 }\n",
            "benchmark.config.mjs": "export default { protocolVersion: 1 }\n",
        }
    )
    expect_error(root, "config-multiple", "benchmark.config.mjs")


@pytest.mark.parametrize(
    "source",
    [
        pytest.param('export default { protocolVersion: 1, title: "Static" }\n', id="literal"),
        pytest.param(
            'const config = { protocolVersion: 1, title: "Static" }\nexport default config\n', id="const-then-export"
        ),
        pytest.param('export default { protocolVersion: 1, title: "Static" } as const\n', id="as-const"),
        pytest.param(
            'import type { Config } from "./types"\n'
            'export default { protocolVersion: 1, title: "Static" } satisfies Config\n',
            id="type-import-satisfies",
        ),
        pytest.param(
            'type C = { title: string }\ninterface D { x: number }\n'
            'export default { protocolVersion: 1, title: `Static` }\n',
            id="type-declarations-plain-template",
        ),
    ],
)
def test_static_config_forms_are_read_without_running(bench, source):
    root = bench({**EVAL, "benchmark.config.ts": source})
    cases, manifest = build_ok(root)
    assert manifest["title"] == "Static"
    assert cases == [answer_case()]


def test_config_is_never_executed(bench, tmp_path):
    # A config whose evaluation would have a side effect is rejected, and the side effect never happens.
    marker = tmp_path / "ran"
    root = bench(
        {
            **EVAL,
            "benchmark.config.mjs": f'import {{ writeFileSync }} from "node:fs"\nwriteFileSync({str(marker)!r}, "x")\n'
            'export default { protocolVersion: 1 }\n',
        }
    )
    expect_error(root, "config-not-static", "benchmark.config.mjs", line=1)
    assert not marker.exists()


@pytest.mark.parametrize(
    "body, line",
    [
        pytest.param('{ protocolVersion: 1, title: name }', 1, id="identifier"),
        pytest.param('{ protocolVersion: 1, title: String("x") }', 1, id="call"),
        pytest.param('{ protocolVersion: 1, ...base }', 1, id="spread"),
        pytest.param('{ protocolVersion: 1, ["title"]: "x" }', 1, id="computed-key"),
        pytest.param('{ protocolVersion: 1, title: `v${1}` }', 1, id="template-with-expression"),
        pytest.param('{ protocolVersion: 1,\n  title: () => "x" }', 2, id="function"),
        pytest.param('{ protocolVersion: 1, title() { return "x" } }', 1, id="method"),
        pytest.param('{ protocolVersion: 1, evals: [..."x"] }', 1, id="array-spread"),
    ],
)
def test_non_literal_config_values_are_rejected(bench, body, line):
    root = bench({**EVAL, "benchmark.config.ts": f"export default {body}\n"})
    expect_error(root, "config-not-static", "benchmark.config.ts", line=line)


def test_config_value_import_is_rejected(bench):
    root = bench(
        {
            **EVAL,
            "shared.ts": "export const title = 'x'\n",
            "benchmark.config.ts": 'import { title } from "./shared"\nexport default { protocolVersion: 1 }\n',
        }
    )
    expect_error(root, "config-not-static", "benchmark.config.ts", message="imports values", line=1)


def test_config_setup_code_is_rejected(bench):
    root = bench({**EVAL, "benchmark.config.ts": 'console.log("setup")\nexport default { protocolVersion: 1 }\n'})
    expect_error(root, "config-not-static", "benchmark.config.ts", line=1)


def test_config_without_default_export(bench):
    root = bench({**EVAL, "benchmark.config.ts": "export const config = { protocolVersion: 1 }\n"})
    expect_error(root, "config-no-default", "benchmark.config.ts")


def test_config_default_export_must_be_object(bench):
    root = bench({**EVAL, "benchmark.config.ts": 'export default ["evals/answer.ts"]\n'})
    expect_error(root, "config-not-object", "benchmark.config.ts", line=1)


def test_config_syntax_error_names_line(bench):
    root = bench({**EVAL, "benchmark.config.ts": "export default {\n  protocolVersion: 1,,\n}\n"})
    expect_error(root, "config-syntax", "benchmark.config.ts", line=2)


def test_unknown_config_key_is_rejected_with_suggestion(bench):
    root = bench({**EVAL, "benchmark.config.ts": 'export default { protocolVersion: 1, titel: "x" }\n'})
    diag = expect_error(root, "config-unknown-key", "benchmark.config.ts", message="titel", line=1)
    assert "'title'" in diag["hint"]


def test_duplicate_config_key_is_rejected(bench):
    root = bench({**EVAL, "benchmark.config.ts": 'export default { protocolVersion: 1, title: "a", title: "b" }\n'})
    expect_error(root, "config-duplicate-key", "benchmark.config.ts")


def test_protocol_version_is_required_when_a_config_exists(bench):
    root = bench({**EVAL, "benchmark.config.ts": 'export default { title: "x" }\n'})
    expect_error(root, "config-protocol-version", "benchmark.config.ts")


@pytest.mark.parametrize("value", ["2", '"1"', "true", "1.5", "null"])
def test_protocol_version_must_be_integer_one(bench, value):
    root = bench({**EVAL, "benchmark.config.ts": f"export default {{ protocolVersion: {value} }}\n"})
    expect_error(root, "config-protocol-version", "benchmark.config.ts", line=1)


@pytest.mark.parametrize("value", ['""', '"   "', "3", "null"])
def test_title_must_be_non_empty_string(bench, value):
    root = bench({**EVAL, "benchmark.config.ts": f"export default {{ protocolVersion: 1, title: {value} }}\n"})
    expect_error(root, "config-title", "benchmark.config.ts", line=1)


@pytest.mark.parametrize("value", ['""', '"' + "v" * 65 + '"', "1"])
def test_version_must_be_non_empty_string_of_at_most_64(bench, value):
    root = bench({**EVAL, "benchmark.config.ts": f"export default {{ protocolVersion: 1, version: {value} }}\n"})
    expect_error(root, "config-version", "benchmark.config.ts", line=1)


def test_version_of_64_characters_is_accepted(bench):
    root = bench({**EVAL, "benchmark.config.ts": f'export default {{ protocolVersion: 1, version: "{"v" * 64}" }}\n'})
    assert build_ok(root)[1]["version"] == "v" * 64


def test_explicit_evals_array_must_not_be_empty(bench):
    root = bench({**EVAL, "benchmark.config.ts": "export default { protocolVersion: 1, evals: [] }\n"})
    expect_error(root, "config-evals-empty", "benchmark.config.ts", line=1)


def test_evals_must_be_an_array(bench):
    root = bench({**EVAL, "benchmark.config.ts": 'export default { protocolVersion: 1, evals: "evals/answer.ts" }\n'})
    expect_error(root, "config-paths", "benchmark.config.ts", line=1)


def test_empty_and_omitted_tools_arrays_are_valid(bench):
    root = bench(
        {
            **EVAL,
            "benchmark.config.ts": 'export default { protocolVersion: 1, evals: ["evals/answer.ts"], tools: [] }\n',
        }
    )
    cases, manifest = build_ok(root)
    assert cases == [answer_case()] and manifest["tools"] == []


def test_explicit_evals_define_release_order_and_boundary(bench):
    root = bench(
        {
            "evals/b.ts": one_case("b"),
            "evals/a.ts": one_case("a"),
            "evals/unlisted.ts": one_case("unlisted"),
            "benchmark.config.ts": 'export default { protocolVersion: 1, evals: ["evals/b.ts", "./evals/a.ts"] }\n',
        }
    )
    cases, manifest = build_ok(root)
    assert [c["id"] for c in cases] == ["b", "a"]
    assert [e["module"] for e in manifest["evals"]] == ["evals/b.ts", "evals/a.ts"]


@pytest.mark.parametrize(
    "path, code",
    [
        pytest.param("/abs/evals/answer.ts", "config-path", id="absolute"),
        pytest.param("evals\\\\answer.ts", "config-path", id="backslash"),
        pytest.param("../outside/answer.ts", "config-path", id="dotdot-leaves-root"),
        pytest.param("evals/answer.json", "config-path", id="wrong-extension"),
        pytest.param("evals/missing.ts", "config-path-missing", id="missing"),
    ],
)
def test_bad_config_paths(bench, path, code):
    root = bench({**EVAL, "benchmark.config.ts": f'export default {{ protocolVersion: 1, evals: ["{path}"] }}\n'})
    expect_error(root, code, "benchmark.config.ts", line=1)


def test_dotdot_that_stays_inside_root_is_fine(bench):
    root = bench(
        {**EVAL, "benchmark.config.ts": 'export default { protocolVersion: 1, evals: ["evals/../evals/answer.ts"] }\n'}
    )
    assert build_ok(root)[0] == [answer_case()]


def test_duplicate_config_paths_are_rejected(bench):
    root = bench(
        {
            **EVAL,
            "benchmark.config.ts": 'export default { protocolVersion: 1, evals: ["evals/answer.ts", "./evals/answer.ts"] }\n',
        }
    )
    expect_error(root, "config-path-duplicate", "benchmark.config.ts", line=1)


def test_symlink_resolving_outside_root_is_rejected(bench, tmp_path):
    outside = tmp_path / "elsewhere.ts"
    outside.write_text(one_case("elsewhere"))
    root = bench(
        {
            **EVAL,
            "benchmark.config.ts": 'export default { protocolVersion: 1, evals: ["evals/answer.ts", "evals/link.ts"] }\n',
        }
    )
    os.symlink(outside, root / "evals" / "link.ts")
    expect_error(root, "config-path", "benchmark.config.ts", message="symlink")


def test_paths_are_relative_to_the_config_directory_in_a_monorepo(tmp_path):
    from tests.conftest import write_tree

    repo = write_tree(
        tmp_path / "repo",
        {
            "pants.toml": "",
            "evals/other.ts": one_case("other"),  # beside the repository root, not the benchmark
            "benchmarks/support/benchmark.config.ts": 'export default { protocolVersion: 1, evals: ["evals/answer.ts"] }\n',
            "benchmarks/support/evals/answer.ts": one_case(),
        },
    )
    # Pointing at the config file selects its directory as the benchmark root.
    cases, manifest = build_ok(repo / "benchmarks/support/benchmark.config.ts", tmp_path / "out")
    assert cases == [answer_case()]
    assert manifest["title"] == "support"
