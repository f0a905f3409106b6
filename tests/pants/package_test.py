"""RuleRunner test of the packaging rule: a tiny benchmark (one plain eval,
one eval whose cases a transformer generates) packaged through the rule
graph with the real core (its PEX built from this checkout's sources and
lockfile) and the real pinned Node toolchain, asserting on the release
files in the output digest.

Under `./pants test` the test runs in a sandbox; it finds this checkout from
the pex CLI that `./pants` points Pants at (`PANTS_PEX_CLI_URL_TEMPLATE`,
passed through by tests/pants/BUILD) and copies the core's sources and
lockfiles into the RuleRunner build root."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from pants.backend.python import register as python_backend
from pants.core import register as core
from pants.core.goals.package import BuiltPackage
from pants.engine.addresses import Address
from pants.engine.fs import Digest, DigestContents
from pants.testutil.rule_runner import QueryRule, RuleRunner

from trunchbull_pants import register
from trunchbull_pants.compile_release import CompiledRelease, CompileReleaseRequest
from trunchbull_pants.goals.package import TrunchbullReleaseFieldSet


def _checkout() -> Path:
    url = os.environ.get("PANTS_PEX_CLI_URL_TEMPLATE", "")
    repo = os.environ.get("TRUNCHBULL_REPO")
    if not repo and url.startswith("file://") and "/.pants-env/" in url:
        repo = url[len("file://") :].split("/.pants-env/")[0]
    if not repo or not (Path(repo) / "src" / "trunchbull" / "compile" / "steps.py").is_file():
        pytest.fail("run with ./pants test (it sets PANTS_PEX_CLI_URL_TEMPLATE) or set TRUNCHBULL_REPO")
    return Path(repo)


def _python311_dir() -> str:
    candidates = sorted(Path.home().glob(".pyenv/versions/3.11*/bin/python3.11"))
    found = shutil.which("python3.11")
    if candidates:
        return str(candidates[-1].parent)
    if found:
        return str(Path(found).resolve().parent)
    pytest.fail("the core needs a CPython 3.11 interpreter")


def _core_files(repo: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    src = repo / "src" / "trunchbull"
    for path in sorted(src.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and not path.name.endswith(".pyc"):
            files[path.relative_to(repo).as_posix()] = path.read_text()
    for rel in (
        "BUILD",
        "build-support/prelude.py",
        "third_party/python/requirements.txt",
        "third_party/python/pants-python-default.lock",
        "third_party/npm/package.json",
        "third_party/npm/package-lock.json",
        "third_party/npm-llamacpp/package.json",
        "third_party/npm-llamacpp/package-lock.json",
        "third_party/npm-typescript/package.json",
        "third_party/npm-typescript/package-lock.json",
    ):
        files[rel] = (repo / rel).read_text()
    # The root BUILD also declares the plugin resolve's requirements; the
    # RuleRunner build root has only the core's resolve.
    files["BUILD"] = "\n".join(
        [
            'python_requirements(name="reqs", source="third_party/python/requirements.txt", resolve="python-default")',
            'files(name="npm-toolchain-lock", sources=["third_party/npm/package.json", "third_party/npm/package-lock.json"])',
            'files(name="npm-llamacpp-lock", sources=["third_party/npm-llamacpp/package.json", '
            '"third_party/npm-llamacpp/package-lock.json"])',
            'files(name="npm-typescript-lock", sources=["third_party/npm-typescript/package.json", '
            '"third_party/npm-typescript/package-lock.json"])',
            "",
        ]
    )
    return files


BENCHMARK = {
    "bench/BUILD": 'trunchbull_release(name="release")\n',
    "bench/benchmark.config.ts": 'export default { protocolVersion: 1, title: "Tiny", version: "1" }\n',
    "bench/lib/prompts.ts": 'export const SYSTEM = "Answer with a number only."\n',
    "bench/evals/sum.ts": (
        'import { SYSTEM } from "../lib/prompts"\n'
        "export default {\n"
        '  id: "sum",\n'
        "  systemPrompt: SYSTEM,\n"
        "  cases: [\n"
        '    { id: "sum.a", prompt: "1 + 1?", evaluate: { kind: "exact", expected: "2" } },\n'
        '    { id: "sum.b", prompt: "2 + 3?", evaluate: { kind: "exact", expected: "5" } },\n'
        "  ],\n"
        "}\n"
    ),
    "bench/evals/squares.ts": (
        "export default {\n"
        '  id: "squares",\n'
        '  cases: { transformer: "../gen/squares.ts", sources: { numbers: "../gen/numbers.txt" } },\n'
        "}\n"
    ),
    "bench/gen/squares.ts": (
        "export default {\n"
        '  name: "squares",\n'
        "  transform({ numbers }) {\n"
        "    return numbers.content.split(\"\\n\").filter((l) => l.trim()).map((n) => ({\n"
        '      id: `sq${n}`, prompt: `${n} squared?`, evaluate: { kind: "exact", expected: String(Number(n) ** 2) },\n'
        "    }))\n"
        "  },\n"
        "}\n"
    ),
    "bench/gen/numbers.txt": "3\n4\n5\n",
}


@pytest.fixture
def rule_runner() -> RuleRunner:
    repo = _checkout()
    runner = RuleRunner(
        rules=[
            *core.rules(),
            *python_backend.rules(),
            *register.rules(),
            QueryRule(BuiltPackage, [TrunchbullReleaseFieldSet]),
            QueryRule(CompiledRelease, [CompileReleaseRequest]),
            QueryRule(DigestContents, [Digest]),
        ],
        target_types=[*core.target_types(), *python_backend.target_types(), *register.target_types()],
        objects=dict(python_backend.build_file_aliases().objects),  # python_artifact() of the core's BUILD
        ca_certs_path=os.environ.get("PANTS_CA_CERTS_PATH"),
    )
    runner.write_files({**_core_files(repo), **BENCHMARK})
    known = os.environ.get("PANTS_PEX_CLI_KNOWN_VERSIONS")
    toml_known = next(
        line.strip().strip('",')
        for line in (repo / "pants.toml").read_text().splitlines()
        if line.strip().startswith('"v2.1.137|')
    )
    runner.set_options(
        [
            "--source-root-patterns=['/', '/src']",
            "--build-file-prelude-globs=['build-support/prelude.py']",
            # The core and the toolchain lockfile from this checkout's sources (as pants.toml does).
            "--trunchbull-core=//src/trunchbull:lib",
            "--trunchbull-toolchain-lockfile=//:npm-toolchain-lock",
            "--python-interpreter-constraints=['CPython==3.11.*']",
            "--python-enable-resolves",
            "--python-default-resolve=python-default",
            "--python-resolves={'python-default': 'third_party/python/pants-python-default.lock'}",
            f"--python-bootstrap-search-path=['{_python311_dir()}']",
            "--pex-cli-version=v2.1.137",
            f"--pex-cli-known-versions={known or [toml_known]}",
            f"--pex-cli-url-template={os.environ['PANTS_PEX_CLI_URL_TEMPLATE']}"
            if os.environ.get("PANTS_PEX_CLI_URL_TEMPLATE")
            else f"--pex-cli-url-template=file://{repo}/.pants-env/pex-2.1.137.pex",
            "--subprocess-environment-env-vars=['PIP_CONFIG_FILE=/dev/null']",
        ],
        env_inherit={"PATH", "HOME"},
    )
    return runner


def test_packages_a_release(rule_runner: RuleRunner) -> None:
    target = rule_runner.get_target(Address("bench", target_name="release", generated_name="release"))
    built = rule_runner.request(BuiltPackage, [TrunchbullReleaseFieldSet.create(target)])
    assert [a.relpath for a in built.artifacts] == ["bench/release"]
    contents = {fc.path: fc.content for fc in rule_runner.request(DigestContents, [built.digest])}
    assert {"bench/release/release.json", "bench/release/cases.jsonl"} <= set(contents)
    assert all(p.startswith("bench/release/") for p in contents)

    release = json.loads(contents["bench/release/release.json"])
    assert release["title"] == "Tiny"
    assert {e["id"]: e["caseCount"] for e in release["evals"]} == {"squares": 3, "sum": 2}
    cases = [json.loads(line) for line in contents["bench/release/cases.jsonl"].splitlines()]
    text = contents["bench/release/cases.jsonl"].decode()
    assert len(cases) == 5
    # The transformer's cases (both runs agreed) and the imported helper's prompt.
    assert "25" in text and "5 squared?" in text
    assert "Answer with a number only." in contents["bench/release/release.json"].decode() + text


def test_errors_are_diagnostics_not_a_package(rule_runner: RuleRunner) -> None:
    rule_runner.write_files(
        {"bench/evals/bad.ts": 'export default { id: "Bad ID", prompt: "hi", evaluate: { kind: "non_empty" } }\n'}
    )
    compiled = rule_runner.request(
        CompiledRelease, [CompileReleaseRequest(Address("bench", target_name="release", generated_name="release"))]
    )
    assert compiled.exit_code == 1
    assert "evals/bad.ts" in compiled.diagnostics and "error[" in compiled.diagnostics
