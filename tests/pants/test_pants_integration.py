"""Integration tests of the Pants plugin: the real `./pants` on real
benchmarks, in a throw-away build root (workspace.py). Run by ./run-tests
(Python 3.11); they take a few minutes (Pants, a pantsd, a cold build of a
50-eval benchmark), so they are marked `slow` (deselect with -m 'not slow')."""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from pathlib import Path

import pytest

from workspace import REPO, Workspace, buildgrid as buildgrid_server, fifty_evals, remote_cache_options

pytestmark = pytest.mark.slow


def _tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _cli_build(root: Path, out: Path) -> None:
    proc = subprocess.run(
        [str(REPO / "trunchbull"), "build", str(root), "-o", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def ws():
    workspace = Workspace()
    workspace.write(fifty_evals())
    for name in ("support", "data", "minimal"):
        workspace.copy_example(name)
    workspace.copy_benchmark("gsm8k")  # a standard benchmark: a transformer over committed data
    try:
        yield workspace
    finally:
        workspace.cleanup()


def test_package_is_byte_identical_to_the_cli(ws: Workspace, tmp_path: Path) -> None:
    targets = ("examples/support", "examples/data", "examples/minimal", "benchmarks/gsm8k")
    ws.pants("package", *(f"{t}:release" for t in targets))
    for target in targets:
        _cli_build(ws.root / target, tmp_path / target)
        pants_out = ws.root / "dist" / target.replace("/", ".") / "release"
        assert _tree(pants_out) == _tree(tmp_path / target), target
    release = (ws.root / "dist/examples.support/release/release.json").read_text()
    assert '"lookup_policy"' in release


def test_tar_and_output_path(ws: Workspace, tmp_path: Path) -> None:
    dest = ws.copy_example("minimal", "tarred")
    (ws.root / dest / "BUILD").write_text('trunchbull_release(name="release", tar=True, output_path="out/rel")\n')
    ws.pants("package", f"{dest}:release")
    proc = subprocess.run(
        [str(REPO / "trunchbull"), "build", str(ws.root / dest), "-o", str(tmp_path / "rel"), "--tar"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert _tree(ws.root / "dist/out/rel") == _tree(tmp_path / "rel")
    assert (ws.root / "dist/out/rel.tar").read_bytes() == (tmp_path / "rel.tar").read_bytes()


def _executed(ws: Workspace) -> set[str]:
    run = ws.pants("package", "bench50:release")
    return set(run.executed)


def _steps(*evals: str, scanned: str) -> set[str]:
    steps = {f"Scan imports of {scanned}", "Assemble the release of bench50:release#release"}
    for name in evals:
        steps |= {f"Bundle and inspect bench50/evals/{name}.ts", f"Expand the cases of bench50/evals/{name}.ts"}
    return steps


def test_incrementality_counts_processes(ws: Workspace) -> None:
    # Edits carry a fresh token: the local process cache is shared with other
    # build roots, and an edit seen before would (rightly) be a cache hit.
    token = uuid.uuid4().hex[:8]
    _executed(ws)  # cold (or from an earlier test's cache)
    assert _executed(ws) == set(), "a no-op rebuild runs no process"

    eval_file = ws.root / "bench50/evals/e20.ts"
    eval_file.write_text(eval_file.read_text().replace("What is", f"Compute ({token})"))
    assert _executed(ws) == _steps("e20", scanned="bench50/evals/e20.ts")

    helper = ws.root / "bench50/lib/shared.ts"
    helper.write_text(helper.read_text().replace("briefly", f"tersely ({token})"))
    assert _executed(ws) == _steps("e00", "e01", "e02", "e03", "e04", scanned="bench50/lib/shared.ts")

    outside = ws.root / "shared/prompts.ts"
    outside.write_text(outside.read_text().replace("Question", f"Q ({token})"))
    assert _executed(ws) == _steps("e05", "e06", "e07", "e08", "e09", scanned="shared/prompts.ts")
    assert _executed(ws) == set()
    manifest = (ws.root / "dist/bench50/release/release.json").read_text()
    assert '"caseCount":3' in manifest.replace(" ", "")


def test_transformer_runs_are_separate_cached_processes(ws: Workspace, tmp_path: Path) -> None:
    """examples/data's `trivia` eval: its transformer's two runs are their own
    processes. Editing the transformer re-runs those two runs, the expansion
    of that eval and the assembly, but not the bundle-inspect of the eval (a
    transformer is named by a path, not imported)."""
    target = "examples/data:release"
    data = "examples/data/evals"
    ws.pants("package", target)
    transformer = ws.root / data / "trivia/transform.ts"
    transformer.write_text(transformer.read_text() + f"// edited ({uuid.uuid4().hex[:8]})\n")
    executed = set(ws.pants("package", target).executed)
    assert executed == {
        f"Scan imports of {data}/trivia/transform.ts",  # dependency inference of the edited file
        # The compiler's discovery also takes evals/trivia/transform.ts as a
        # module to inspect (assembly then knows it as the transformer), as
        # `trunchbull build` does.
        f"Bundle and inspect {data}/trivia/transform.ts",
        f"Expand the cases of {data}/trivia/transform.ts",
        f"Run the transformer of {data}/trivia.ts (run 1 of 2)",
        f"Run the transformer of {data}/trivia.ts (run 2 of 2)",
        f"Expand the cases of {data}/trivia.ts",
        f"Assemble the release of {target}#release",
    }, sorted(executed)
    assert f"Bundle and inspect {data}/trivia.ts" not in executed
    assert ws.pants("package", target).executed == []
    _cli_build(ws.root / "examples/data", tmp_path / "cli")
    assert _tree(ws.root / "dist/examples.data/release") == _tree(tmp_path / "cli")


def test_transformer_imports_a_package_through_the_linked_node_modules(ws: Workspace, tmp_path: Path) -> None:
    """A transformer importing `zod` from the benchmark's lockfile: its runs see
    the installed node_modules linked into their sandboxes (not copied)."""
    dest = ws.copy_example("support", "zodgen")
    config = ws.root / dest / "benchmark.config.ts"
    text = config.read_text()
    assert "evals: [" in text
    config.write_text(text.replace("evals: [", 'evals: ["evals/squares.ts", ', 1))
    ws.write(
        {
            f"{dest}/evals/squares.ts": 'export default { id: "squares", cases: { transformer: "../gen/squares.ts", '
            'sources: { numbers: "../gen/numbers.txt" } } }\n',
            f"{dest}/gen/squares.ts": (
                'import { z } from "zod"\n'
                "const N = z.coerce.number().int()\n"
                'export default { name: "squares", transform({ numbers }) {\n'
                '  return numbers.content.split("\\n").filter((l) => l.trim()).map((n) => ({ id: `sq${N.parse(n)}`,\n'
                '    prompt: `${n} squared?`, evaluate: { kind: "exact", expected: String(N.parse(n) ** 2) } }))\n'
                "} }\n"
            ),
            f"{dest}/gen/numbers.txt": "3\n4\n",
        }
    )
    executed = set(ws.pants("package", f"{dest}:release").executed)
    assert {f"Run the transformer of {dest}/evals/squares.ts (run {n} of 2)" for n in (1, 2)} <= executed
    _cli_build(ws.root / dest, tmp_path / "cli")
    built = _tree(ws.root / "dist" / dest.replace("/", ".") / "release")
    assert built == _tree(tmp_path / "cli")
    assert b'"id":"sq4"' in built["cases.jsonl"].replace(b" ", b"")


def test_dependency_graph(ws: Workspace) -> None:
    dependents = ws.pants("dependents", "shared/prompts.ts").stdout.split()
    assert {f"bench50/evals/e0{i}.ts:../release" for i in range(5, 10)} <= set(dependents)
    assert not any("e1" in d or "e04" in d for d in dependents)
    deps = ws.pants("dependencies", "bench50/evals/e01.ts:../release").stdout.split()
    assert deps == ["bench50/lib/shared.ts:../release"]
    deps = ws.pants("dependencies", "examples/data/evals/trivia.ts:../release").stdout.split()
    assert "examples/data/evals/trivia/transform.ts:../../release" in deps
    assert "examples/data/evals/trivia/questions.tsv:../../release" in deps
    listing = ws.pants("list", "examples/data::").stdout.split()
    assert "examples/data:release#release" in listing

    # --changed-since: a shared helper change selects exactly its dependents.
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(ws.root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    helper = ws.root / "bench50/lib/shared.ts"
    helper.write_text(helper.read_text() + f"// changed {uuid.uuid4().hex}\n")
    changed = ws.pants("--changed-since=HEAD", "--changed-dependents=transitive", "list").stdout.split()
    evals = sorted(c for c in changed if "/evals/" in c)
    assert evals == [f"bench50/evals/e0{i}.ts:../release" for i in range(5)]
    assert "bench50:release#release" in changed


def test_check_reports_the_compiler_diagnostics(ws: Workspace) -> None:
    ws.write(
        {
            "broken/BUILD": 'trunchbull_release(name="release")\n',
            "broken/evals/bad.ts": 'export default { id: "Bad ID", prompt: "hi", evaluate: { kind: "non_empty" } }\n',
        }
    )
    run = ws.pants("check", "broken:release", check=False)
    assert run.code != 0
    assert "error[" in run.stderr and "evals/bad.ts" in run.stderr
    ok = ws.pants("check", "examples/minimal:release")
    assert ok.code == 0
    failed = ws.pants("package", "broken:release", check=False)
    assert failed.code != 0 and "evals/bad.ts" in failed.stderr
    assert not (ws.root / "dist/broken").exists()


def test_cli_pex_runs_on_another_checkout(ws: Workspace, tmp_path: Path) -> None:
    ws.pants("package", "src/trunchbull:cli")
    pex = ws.root / "dist" / "trunchbull.pex"
    assert pex.is_file() and os.access(pex, os.X_OK)
    other = tmp_path / "checkout"
    (other / ".git").mkdir(parents=True)
    subprocess.run(["cp", "-r", str(REPO / "examples" / "minimal"), str(other / "minimal")], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["TRUNCHBULL_TOOLCHAIN"] = str(REPO / ".cache" / "toolchain")
    proc = subprocess.run(
        [str(pex), "build", str(other / "minimal"), "-o", str(tmp_path / "via-pex")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    _cli_build(other / "minimal", tmp_path / "via-cli")
    assert _tree(tmp_path / "via-pex") == _tree(tmp_path / "via-cli")


def test_rule_runner_tests_pass_under_pants() -> None:
    """The RuleRunner tests (Python 3.9, `pants-plugins` resolve) via `./pants test`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(
        [str(REPO / "pants"), "--no-pantsd", "test", "tests/pants::"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**env, "PANTS_BOOTSTRAP_QUIET": "1"},
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    assert "rule_runner_test.py:rule_tests succeeded" in proc.stderr
    assert "package_test.py:rule_tests succeeded" in proc.stderr


# -----------------------------------------------------------------------------------------------
# Remote cache (REAPI) with a real BuildGrid server on 127.0.0.1
# -----------------------------------------------------------------------------------------------


@pytest.fixture
def buildgrid(tmp_path: Path):
    """A BuildGrid CAS + ActionCache on 127.0.0.1 (installed from PyPI into .cache/ on first use)."""
    with buildgrid_server(tmp_path / "buildgrid") as address:
        yield address


STEP_PREFIXES = (
    "Scan imports",
    "Bundle and inspect",
    "Expand the cases",
    "Assemble the release",
    "Read the config",
    "Install the",
    "Run the transformer",
)


def test_remote_cache_serves_a_rebuild_from_an_empty_local_store(buildgrid: str, tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "repo")
    try:
        ws.copy_example("support")
        ws.write(fifty_evals(n=5))
        remote = [*remote_cache_options(buildgrid), "--no-pantsd", "--stats-log"]
        targets = ["examples/support:release", "bench50:release"]

        # 1. Cold local store: everything runs and is written to the remote cache.
        first = ws.pants(*remote, f"--local-store-dir={tmp_path / 'store1'}", "package", *targets)
        assert first.counter("remote_cache_write_errors") == 0, first.stderr[-3000:]
        steps = {p for p in first.executed if p.startswith(STEP_PREFIXES)}
        assert len(steps) >= 10
        built = {
            t: _tree(ws.root / "dist" / d / "release")
            for t, d in (("support", "examples.support"), ("bench", "bench50"))
        }

        # 2. Another empty local store, no pantsd: served from the remote cache.
        for d in ("examples.support", "bench50"):
            subprocess.run(["rm", "-rf", str(ws.root / "dist" / d)], check=True)
        second = ws.pants(*remote, f"--local-store-dir={tmp_path / 'store2'}", "package", *targets)
        # Pants starts a local run while the remote lookup is in flight and
        # cancels it on a hit: the hits, and no local run finishing first, are
        # what shows that nothing ran again.
        hits = set(re.findall(r'remote cache hit for: "(.*?)"', second.stderr))
        assert steps <= hits, f"not served from the remote cache: {sorted(steps - hits)}"
        assert second.counter("remote_cache_speculation_local_completed_first") == 0
        assert second.counter("remote_cache_requests_uncached") == 0
        assert {
            t: _tree(ws.root / "dist" / d / "release")
            for t, d in (("support", "examples.support"), ("bench", "bench50"))
        } == built

        # 3. A warm local store (the usual one) gives the same bytes.
        for d in ("examples.support", "bench50"):
            subprocess.run(["rm", "-rf", str(ws.root / "dist" / d)], check=True)
        ws.pants("--no-pantsd", "package", *targets)
        assert {
            t: _tree(ws.root / "dist" / d / "release")
            for t, d in (("support", "examples.support"), ("bench", "bench50"))
        } == built
    finally:
        ws.cleanup()
