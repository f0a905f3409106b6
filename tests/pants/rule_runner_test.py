"""RuleRunner tests: target generation, dependency inference and the
dependency-install/toolchain processes, on small benchmarks written into a
temporary build root (as Pants' own backends test their rules)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pants.engine.addresses import Address, Addresses
from pants.engine.internals.graph import Owners, OwnersRequest
from pants.engine.target import (
    DependenciesRequest,
    InferredDependencies,
)
from pants.backend.python import register as python_backend
from pants.core import register as core
from pants.testutil.rule_runner import QueryRule, RuleRunner

from trunchbull_pants import register
from trunchbull_pants.dependency_inference import (
    InferTrunchbullDependencies,
    TrunchbullInferenceFieldSet,
    import_candidates,
    referenced_paths,
    specifier_location,
    unresolved_import_warning,
)
from trunchbull_pants.generate import ReleaseFiles, ReleaseFilesRequest, looks_like_transformer
from trunchbull_pants.target_types import (
    TrunchbullEvalTarget,
    TrunchbullReleasePackageTarget,
    TrunchbullSourceTarget,
    TrunchbullToolTarget,
    TrunchbullTransformerTarget,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def rule_runner() -> RuleRunner:
    runner = RuleRunner(
        rules=[
            *core.rules(),
            *python_backend.rules(),
            *register.rules(),
            QueryRule(ReleaseFiles, [ReleaseFilesRequest]),
            QueryRule(InferredDependencies, [InferTrunchbullDependencies]),
            QueryRule(Addresses, [DependenciesRequest]),
            QueryRule(Owners, [OwnersRequest]),
        ],
        target_types=[*core.target_types(), *python_backend.target_types(), *register.target_types()],
    )
    runner.set_options(["--trunchbull-toolchain-lockfile=//:npm-toolchain-lock"], env_inherit={"PATH", "HOME"})
    return runner


BENCHMARK = {
    "bench/BUILD": 'trunchbull_release(name="release")\n',
    "bench/evals/a.ts": 'import { p } from "../lib/prompts"\nexport default { id: "a", prompt: p, evaluate: { kind: "non_empty" } }\n',
    "bench/evals/b.ts": 'export default { id: "b", cases: "./b.csv", evaluate: { kind: "non_empty" } }\n',
    "bench/evals/b.csv": "id,prompt\nb1,hi\n",
    "bench/evals/skip.test.ts": "export default {}\n",
    "bench/evals/gen.ts": 'export default { id: "gen", cases: { transformer: "./t/make.ts", sources: { q: "./t/q.txt" } } }\n',
    "bench/evals/t/make.ts": 'export default { name: "make", transform({ q }) { return [] } }\n',
    "bench/evals/t/q.txt": "question\n",
    "bench/tools/tools.ts": 'import { helper } from "../../shared/util.js"\nexport const tools = { helper }\n',
    "bench/lib/prompts.ts": 'export const p = "Say hi"\n',
    "shared/BUILD": "trunchbull_sources()\n",
    "shared/util.ts": "export const helper = 1\n",
}


def test_generates_one_target_per_file(rule_runner: RuleRunner) -> None:
    rule_runner.write_files(BENCHMARK)

    def tgt(rel: str):
        return rule_runner.get_target(Address("bench", target_name="release", relative_file_path=rel))

    assert isinstance(tgt("evals/a.ts"), TrunchbullEvalTarget)
    assert isinstance(tgt("evals/b.ts"), TrunchbullEvalTarget)
    assert isinstance(tgt("evals/b.csv"), TrunchbullSourceTarget)
    assert isinstance(tgt("evals/t/make.ts"), TrunchbullTransformerTarget)
    assert isinstance(tgt("evals/t/q.txt"), TrunchbullSourceTarget)
    assert isinstance(tgt("tools/tools.ts"), TrunchbullToolTarget)
    assert isinstance(tgt("lib/prompts.ts"), TrunchbullSourceTarget)
    package = rule_runner.get_target(Address("bench", target_name="release", generated_name="release"))
    assert isinstance(package, TrunchbullReleasePackageTarget)

    files = rule_runner.request(ReleaseFiles, [ReleaseFilesRequest(Address("bench", target_name="release"), ("**/*",))])
    assert "BUILD" not in files.files
    assert files.evals == ("evals/a.ts", "evals/b.ts", "evals/gen.ts")  # .test. skipped, transformer not an eval
    assert files.tools == ("tools/tools.ts",)
    assert files.transformers == ("evals/t/make.ts",)


def test_config_lists_entrypoints(rule_runner: RuleRunner) -> None:
    rule_runner.write_files(
        {
            **BENCHMARK,
            "bench/benchmark.config.ts": 'export default { protocolVersion: 1, evals: ["evals/b.ts"], tools: [] }\n',
        }
    )
    files = rule_runner.request(ReleaseFiles, [ReleaseFilesRequest(Address("bench", target_name="release"), ("**/*",))])
    assert files.config_file == "benchmark.config.ts"
    assert files.evals == ("evals/b.ts",)
    assert files.tools == ()
    a = rule_runner.get_target(Address("bench", target_name="release", relative_file_path="evals/a.ts"))
    assert isinstance(a, TrunchbullSourceTarget)  # not listed: an ordinary source


def test_candidates_and_references() -> None:
    assert import_candidates("b/evals/a.ts", "../lib/x.js")[:3] == ["b/lib/x.js", "b/lib/x.js.tsx", "b/lib/x.js.ts"]
    assert "b/lib/x.ts" in import_candidates("b/evals/a.ts", "../lib/x.js")
    assert import_candidates("b/a.ts", "zod") == []
    assert import_candidates("a.ts", "../../etc/passwd") == []
    assert referenced_paths("b/evals/a.ts", 'cases: "./x.csv", t: `../t.ts`') == ["b/evals/x.csv", "b/t.ts"]
    assert looks_like_transformer('export default { name: "x", transform(s) { return [] } }')
    assert not looks_like_transformer('export default { id: "x", cases: { transformer: "./t.ts" } }')
    assert not looks_like_transformer('const s = z.string().transform((x) => x)\nexport default { id: "x", name: 1 }')


def _toolchain_files() -> dict[str, str]:
    npm = REPO / "third_party" / "npm"
    return {
        "third_party/npm/package.json": (npm / "package.json").read_text(),
        "third_party/npm/package-lock.json": (npm / "package-lock.json").read_text(),
        "BUILD": 'files(name="npm-toolchain-lock", sources=["third_party/npm/package.json", "third_party/npm/package-lock.json"])\n',
    }


def _inferred(rule_runner: RuleRunner, address: Address) -> set[str]:
    target = rule_runner.get_target(address)
    result = rule_runner.request(
        InferredDependencies,
        [InferTrunchbullDependencies(TrunchbullInferenceFieldSet.create(target))],
    )
    return {a.spec for a in result.include}


@pytest.mark.skipif(not os.path.exists("/usr/bin/npm") and not os.environ.get("PATH"), reason="needs npm")
def test_infers_imports_data_files_and_transformers(rule_runner: RuleRunner) -> None:
    rule_runner.write_files({**BENCHMARK, **_toolchain_files()})
    rel = lambda p: Address("bench", target_name="release", relative_file_path=p)  # noqa: E731
    assert _inferred(rule_runner, rel("evals/a.ts")) == {"bench/lib/prompts.ts:../release"}
    assert _inferred(rule_runner, rel("evals/b.ts")) == {"bench/evals/b.csv:../release"}
    assert _inferred(rule_runner, rel("evals/gen.ts")) == {
        "bench/evals/t/make.ts:../../release",
        "bench/evals/t/q.txt:../../release",
    }
    # `../../shared/util.js` resolves to util.ts (esbuild's TypeScript rewrite),
    # owned by the `trunchbull_sources` target outside the benchmark root. (An
    # import that is never used is dropped by esbuild, as from the bundle.)
    assert _inferred(rule_runner, rel("tools/tools.ts")) == {"shared/util.ts"}
    assert _inferred(rule_runner, rel("evals/b.csv")) == set()


def test_unresolved_import_warning_names_file_line_and_column() -> None:
    text = 'import { a } from "./a"\nimport { b } from \'./missing\'\n'
    assert specifier_location(text, "./missing") == (2, 19)
    assert specifier_location(text, "./nowhere") is None
    warning = unresolved_import_warning("b/evals/e.ts", text, [("./missing", "no file b/evals/missing")])
    assert '  * b/evals/e.ts:2:19: import "./missing": no file b/evals/missing\n' in warning
