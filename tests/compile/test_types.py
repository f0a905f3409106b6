"""Types for authors: trunchbull.d.ts, generated from the compiler's own
checks, and `check --types`, which type-checks a benchmark's modules with the
pinned TypeScript compiler and reports its errors as diagnostics.

The module's tests share one real on-demand install of TypeScript, made by the
first `check --types` into the module's own cache directory (`typescript`
below); what an install that fails or races does is in test_typescript_install.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from tests.compile.helpers import SUPPORT, build_ok, with_deps
from tests.conftest import EXAMPLES, REPO, read_cases, run_cli, write_tree
from trunchbull.compile.authoring_types import FILE_NAME, declarations, typed_fields
from trunchbull.compile.cases.fields import CASE_KEYS
from trunchbull.compile.config import CONFIG_KEYS
from trunchbull.compile.evals import EVAL_KEYS
from trunchbull.compile.evaluator_types import interface_name
from trunchbull.compile.scaffold import files as scaffold_files
from trunchbull.compile.typescript_compiler import TypeScript, installed_typescript
from trunchbull.evaluators.registry import kinds
from trunchbull.node.toolchain import toolchain

COMMITTED = REPO / "docs" / FILE_NAME


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory):
    """The module's own cache directory (TRUNCHBULL_CACHE_DIR), for the CLI it starts and in-process."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRUNCHBULL_CACHE_DIR", str(cache))
        yield cache


@pytest.fixture(scope="module")
def typescript(cache_dir) -> tuple[TypeScript, str]:
    """TypeScript as the first `check --types` installs it: (the install, that run's stderr)."""
    assert installed_typescript() is None
    first = run_cli("check", "--types", EXAMPLES / "minimal")
    assert first.code == 0, first.stderr
    installed = installed_typescript()
    assert installed is not None
    return installed, first.stderr


def test_the_first_check_types_installs_typescript_into_the_cache_and_later_ones_reuse_it(cache_dir, typescript):
    installed, first_stderr = typescript
    assert installed.root.parent == cache_dir / "typescript"
    assert first_stderr.splitlines()[0] == (
        f"trunchbull: installing TypeScript 7.0.2 for check --types into {installed.root} (first use; about 35 MB)"
    )
    version = subprocess.run([str(toolchain().node), str(installed.tsc), "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == "Version 7.0.2"
    assert (installed.type_roots / "node" / "package.json").is_file()  # Node's types
    assert sorted(p.name for p in installed.root.parent.iterdir()) == [installed.root.name]  # no staging left
    again = run_cli("check", "--types", EXAMPLES / "minimal")
    assert (again.code, again.stderr) == (0, ""), again.stderr
    assert again.stdout.startswith("ok: ")


def test_the_core_toolchain_does_not_carry_typescript():
    """Every checkout installs the core toolchain and every Pants compile step links it in:
    the compiler and types only `check --types` uses are not in it."""
    pinned = orjson.loads((REPO / "third_party/npm/package.json").read_bytes())["dependencies"]
    assert "typescript" not in pinned and "@types/node" not in pinned
    on_demand = orjson.loads((REPO / "third_party/npm-typescript/package.json").read_bytes())["dependencies"]
    assert on_demand == {"@types/node": "22.20.7", "typescript": "7.0.2"}
    assert not (toolchain().root / "node_modules" / "typescript").exists()


def test_the_committed_declarations_are_the_generated_ones():
    assert (
        COMMITTED.read_text() == declarations()
    ), f"docs/{FILE_NAME} is out of date: regenerate it with `./trunchbull types > docs/{FILE_NAME}`"


def test_types_prints_the_declarations():
    result = run_cli("types")
    assert result.code == 0, result.stderr
    assert result.stdout == declarations()


def _interface(name: str) -> str:
    text = declarations()
    start = text.index(f"export interface {name}")
    return text[start : text.index("\n  }", start)]


def _properties(block: str) -> dict[str, str]:
    """`name: type` or `name?: type` lines of an interface block → {name: "?" or ""}."""
    found = {}
    for line in block.splitlines()[1:]:
        line = line.strip()
        if line.startswith(("/**", "*")) or ":" not in line:
            continue
        name = line.split(":", 1)[0]
        found[name.rstrip("?")] = "?" if name.endswith("?") else ""
    return found


def test_each_table_of_the_checks_is_one_interface():
    assert list(_properties(_interface("Config"))) == list(CONFIG_KEYS)
    assert list(_properties(_interface("Case<"))) == list(CASE_KEYS)
    shared = [k for k in EVAL_KEYS if k not in ("prompt", "cases", "evaluate")]
    assert list(_properties(_interface("EvalFields"))) == shared
    assert _properties(_interface("Config"))["protocolVersion"] == ""  # required
    assert _properties(_interface("Case<"))["id"] == "" and _properties(_interface("Case<"))["data"] == "?"


def test_a_key_without_a_type_stops_the_generation():
    with pytest.raises(ValueError, match="give every key a type"):
        typed_fields({"id": None}, ("id", "newKey"), "eval")  # type: ignore[dict-item]


def test_every_kind_of_the_registry_has_its_interface_with_its_keys():
    for kind in kinds().values():
        properties = _properties(_interface(interface_name(kind.name)))
        assert set(properties) == set(kind.keys), kind.name
    gsm8k = _interface("Gsm8kEvaluator")
    assert "expected: number | string" in gsm8k  # the check takes 41 as well as "41"
    assert "version: 1" in _interface("ToolCallSyntaxEvaluator")  # and only 1
    assert _properties(_interface("AnswerBankEvaluator")) == {"kind": "", "answers": "", "forbiddenAnswers": "?"}


NEW_KIND = '''
from trunchbull.evaluators.registry import Kind
from trunchbull.evaluators.spec_checks import SpecProblem


def check(spec, out, problems, case_tools):
    if not isinstance(spec.get("rubric"), str):
        problems.append(SpecProblem("rubric", "evaluator-rubric", "rubric must be a string"))
    threshold = spec.get("threshold", 0.5)
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool) or not 0 <= threshold <= 1:
        problems.append(SpecProblem("threshold", "evaluator-rubric", "threshold must be in [0, 1]"))


KIND = Kind(
    name="rubric_test",
    order=99,
    keys=frozenset({"kind", "rubric", "threshold", "model"}),
    reads=("output", "model"),
    prepare=lambda spec, preparation: None,
    check=check,
    example={"kind": "rubric_test", "rubric": "Polite and correct.", "threshold": 0.5},
    passes_when="a judge says so",
)
'''


def test_a_kind_added_to_the_registry_gets_its_interface_without_an_edit(tmp_path):
    """A kind module the registry finds (as a model-graded kind will be added)
    is declared from its keys and example, checked by its own check."""
    extra = write_tree(tmp_path / "extra", {"rubric_test.py": NEW_KIND})
    script = (
        "import sys\n"
        "from trunchbull.evaluators import kinds as package\n"
        f"package.__path__.append({str(extra)!r})\n"
        "from trunchbull.compile.authoring_types import declarations\n"
        "sys.stdout.write(declarations())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    text = result.stdout
    block = text[text.index("export interface RubricTestEvaluator") :]
    block = block[: block.index("\n  }")]
    assert _properties(block) == {"kind": "", "rubric": "", "threshold": "?", "model": "?"}
    assert 'kind: "rubric_test"' in block and "rubric: string" in block and "threshold?: number" in block
    assert "model?: JsonValue" in block  # a key the example does not show
    assert "| RubricTestEvaluator" in text


# -- check --types -------------------------------------------------------------------------------


def _annotate(path: Path, type_name: str, imported: str) -> None:
    """Import `imported` as a type and add `satisfies type_name` to the module's last object."""
    text = path.read_text()
    end = text.rstrip().rfind("}")
    path.write_text(
        f'import type {{ {imported} }} from "trunchbull"\n'
        + text[: end + 1]
        + f" satisfies {type_name}"
        + text[end + 1 :]
    )


def _annotated_copy(example: str, dest: Path) -> Path:
    """A copy of examples/<example> whose modules say `satisfies` their type."""
    shutil.copytree(EXAMPLES / example, dest, ignore=shutil.ignore_patterns("dist", "node_modules"))
    config = dest / "benchmark.config.ts"
    if config.exists():  # examples/data's config says `satisfies Record<string, unknown>`
        config.write_text(config.read_text().replace(" satisfies Record<string, unknown>", ""))
    for module, (type_name, imported) in ANNOTATIONS[example].items():
        _annotate(dest / module, type_name, imported)
    assert dest.joinpath(next(iter(ANNOTATIONS[example]))).read_text().startswith("import type")
    return dest


ANNOTATIONS = {
    "data": {
        "benchmark.config.ts": ("Config", "Config"),
        "evals/arithmetic.ts": ("Eval", "Eval"),
        "evals/capitals.ts": ("Eval", "Eval"),
        "evals/sentiment.ts": ("Eval<{ label: string; accept?: string[] }>", "Eval"),
        "evals/trivia.ts": ("Eval", "Eval"),
        "evals/trivia/transform.ts": ("Transformer", "Transformer"),
        "evals/units.ts": ("Eval", "Eval"),
    },
    "files": {
        "benchmark.config.ts": ("Config", "Config"),
        "evals/files.ts": ("Eval", "Eval"),
        "tools/fs.ts": ("Tools", "Tools"),
    },
    "minimal": {"evals/answer.ts": ("Eval", "Eval")},
    "support": {
        "benchmark.config.ts": ("Config", "Config"),
        "evals/refunds.ts": ("Eval", "Eval"),
        "tools/support.ts": ("Tools", "Tools"),
    },
}


@pytest.mark.parametrize("example", sorted(ANNOTATIONS))
def test_examples_type_check_as_they_are_and_annotated_with_unchanged_content(tmp_path, typescript, example):
    """Each example passes `check --types`; annotated with `import type` and
    `satisfies` it passes too, and builds the same cases and bundles: esbuild
    erases the annotations. (The digest differs: release.json's `inputs`
    records each source file's hash.)"""
    result = run_cli("check", "--types", EXAMPLES / example)
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("ok: ")

    annotated = _annotated_copy(example, tmp_path / example)
    config = annotated / "benchmark.config.ts"
    result = run_cli("check", "--types", "--json", annotated)
    assert result.code == 0, result.stdout + result.stderr
    assert [d for d in result.diagnostics if d["severity"] == "error"] == []

    _, original = build_ok(EXAMPLES / example, tmp_path / "original")
    _, typed = build_ok(annotated, tmp_path / "typed")
    assert typed["files"] == original["files"]  # cases.jsonl and every bundle: the same bytes
    for name in typed["files"]:
        assert (tmp_path / "typed" / name).read_bytes() == (tmp_path / "original" / name).read_bytes()
    changed = {k for k in typed["inputs"] if typed["inputs"][k] != original["inputs"].get(k)}
    assert changed == set(ANNOTATIONS[example]) | ({"benchmark.config.ts"} if config.exists() else set())
    assert read_cases(tmp_path / "typed") == read_cases(tmp_path / "original")


def test_an_editor_with_the_files_init_writes_accepts_an_annotated_example(tmp_path, typescript):
    """What an editor runs: TypeScript alone over the benchmark, with the
    tsconfig.json and trunchbull.d.ts that `init` writes, no Trunchbull between."""
    root = _annotated_copy("data", tmp_path / "data")
    for name in ("tsconfig.json", FILE_NAME):
        (root / name).write_text(scaffold_files(root)[name])
    installed, _ = typescript

    def tsc() -> subprocess.CompletedProcess:
        command = [str(toolchain().node), str(installed.tsc), "-p", ".", "--pretty", "false"]
        return subprocess.run(command, cwd=root, capture_output=True, text=True)

    clean = tsc()
    assert (clean.returncode, clean.stdout) == (0, ""), clean.stdout + clean.stderr
    units = root / "evals/units.ts"
    units.write_text(units.read_text().replace('kind: "exact"', 'kind: "exakt"'))
    mistyped = tsc()
    assert mistyped.returncode != 0
    assert mistyped.stdout.startswith("evals/units.ts(8,3): error TS2322: "), mistyped.stdout
    assert "Type '\"exakt\"' is not assignable" in mistyped.stdout and "Did you mean '\"exact\"'?" in mistyped.stdout


MISTAKES = """\
import type { Eval } from "trunchbull"

const n: number = "x"

export default {
  id: "typed",
  cases: [{ id: "typed.a", prompt: "Say hi", data: { label: "hi" } }],
  evaluate({ output, caseData }) {
    if (output === "") return { pased: true }
    return output.includes(caseData.labl)
  },
} satisfies Eval<{ label: string }>
"""


def test_type_errors_are_diagnostics_in_the_usual_format(bench, typescript):
    root = bench({"evals/typed.ts": MISTAKES})
    assert run_cli("check", root).code == 0  # the compile alone cannot see them
    result = run_cli("check", "--types", "--json", root)
    assert result.code == 1
    found = [(d["code"], d["file"], d["line"], d["message"].split(":")[0]) for d in result.diagnostics]
    assert found == [
        ("type-error", "evals/typed.ts", 3, "TS2322"),  # const n: number = "x"
        ("type-error", "evals/typed.ts", 8, "TS2322"),  # evaluate returns { pased: true }
        ("type-error", "evals/typed.ts", 10, "TS2551"),  # caseData.labl
    ], result.diagnostics
    first = result.diagnostics[0]
    assert first["col"] == 7 and "Type 'string' is not assignable to type 'number'" in first["message"]
    # the deepest line of TypeScript's explanation, after the headline
    assert "(Type '{ pased: boolean; }' is not assignable to type" in result.diagnostics[1]["message"]
    assert "'labl' does not exist" in result.diagnostics[2]["message"]
    text = run_cli("check", "--types", root)
    assert text.code == 1
    assert f"{root}/evals/typed.ts:3:7: error[type-error]: TS2322: Type 'string' is not assignable" in text.stderr
    assert "trunchbull: 3 errors; nothing was written" in text.stderr


def test_a_wrong_evaluator_key_is_one_error_with_types_too(bench, typescript):
    """The compile and the types both see `expectd`: it is reported once, by the compile."""
    root = bench(
        {
            "evals/e.ts": 'import type { Eval } from "trunchbull"\n'
            'export default {\n  id: "e",\n  prompt: "p",\n  evaluate: { kind: "contains", expectd: "x" },\n'
            "} satisfies Eval\n"
        }
    )
    result = run_cli("check", "--types", "--json", root)
    assert result.code == 1
    codes = [(d["code"], d["line"]) for d in result.diagnostics]
    assert codes == [("evaluator-missing-expected", 5), ("evaluator-unknown-key", 5)], result.diagnostics


def test_a_mistyped_tool_is_a_type_error(bench, typescript):
    tools = (
        (SUPPORT / "tools/support.ts")
        .read_text()
        .replace("({ topic, ...(POLICIES[topic] ?? POLICIES.default) })", "topic.toFixed(2)")
    )
    assert "toFixed" in tools
    root = bench(
        with_deps(
            {
                "evals/e.ts": 'export default { id: "e", prompt: "p", tools: ["lookup_policy"], '
                'evaluate: { kind: "non_empty" } }\n',
                "tools/support.ts": tools,
            }
        )
    )
    assert run_cli("check", root).code == 0
    result = run_cli("check", "--types", "--json", root)
    assert [(d["code"], d["file"]) for d in result.diagnostics] == [("type-error", "tools/support.ts")]
    assert "Property 'toFixed' does not exist on type 'string'" in result.diagnostics[0]["message"]


def test_a_module_that_does_not_parse_has_its_one_error_and_no_type_errors(bench, typescript):
    root = bench({"evals/e.ts": 'const n: number = "x"\nexport default {\n  id: "e"\n  prompt: "p",\n}\n'})
    result = run_cli("check", "--types", "--json", root)
    assert [d["code"] for d in result.diagnostics] == ["bundle"], result.diagnostics


def test_init_writes_a_typed_benchmark(tmp_path, typescript):
    target = tmp_path / "fresh"
    assert run_cli("init", target).code == 0
    assert (target / FILE_NAME).read_text() == declarations()
    tsconfig = orjson.loads((target / "tsconfig.json").read_bytes())
    assert tsconfig["compilerOptions"]["strict"] is True and tsconfig["exclude"] == ["dist", "node_modules"]
    assert "satisfies Eval" in (target / "evals/capitals.ts").read_text()
    assert "satisfies Config" in (target / "benchmark.config.ts").read_text()
    result = run_cli("check", "--types", target)
    assert result.code == 0, result.stderr
    evals = target / "evals/capitals.ts"
    evals.write_text(evals.read_text().replace('kind: "contains"', 'kind: "contains", expected: 3'))
    result = run_cli("check", "--types", "--json", target)
    assert result.code == 1
    assert [d["code"] for d in result.diagnostics if d["severity"] == "error"] == ["csv-evaluator-expected"]


def test_a_custom_evaluator_receives_the_declared_arguments(tmp_path):
    """EvaluatorArgs names what the grader passes: a real call's keys."""
    root = write_tree(
        tmp_path / "b",
        {
            "evals/e.ts": textwrap.dedent(
                """\
                export default {
                  id: "e",
                  prompt: "p",
                  evaluate(args) {
                    return { passed: true, details: { keys: Object.keys(args).sort() } }
                  },
                }
                """
            )
        },
    )
    build_ok(root, tmp_path / "rel")
    (tmp_path / "responses.jsonl").write_text('{"caseId": "e", "output": "x"}\n')
    result = run_cli("grade", tmp_path / "rel", tmp_path / "responses.jsonl", "-o", tmp_path / "out.jsonl")
    assert result.code == 0, result.stderr
    keys = orjson.loads((tmp_path / "out.jsonl").read_bytes().splitlines()[0])["details"]["keys"]
    assert keys == sorted(_properties(_interface("EvaluatorArgs")))
