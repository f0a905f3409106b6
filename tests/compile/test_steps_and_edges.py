"""The file-in/file-out steps give the CLI's release byte for byte; edge
rules about where modules and imports may live."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.conftest import EXAMPLES, REPO, run_cli, write_tree


def _step(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return subprocess.run(
        [sys.executable, "-m", "trunchbull.compile.steps", *map(str, args)], env=env, capture_output=True, text=True
    )


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def build_with_steps(root: Path, work: Path, out: Path, deps_dir: Path | None) -> subprocess.CompletedProcess:
    """Run the stages as separate processes, the way the Pants rules do:
    config, bundle-inspect per module, both transformer runs, expand, assemble."""
    assert _step("config", root, "--out", work / "config.json").returncode == 0
    config = orjson.loads((work / "config.json").read_bytes())
    deps = ["--deps-dir", deps_dir] if deps_dir else []
    bundle_dir = (deps_dir or work) / "bundles"
    args = []
    for kind, module in [("eval", m) for m in config["evals"]] + [("tool", m) for m in config["tools"]]:
        step_dir = work / module.replace("/", "_")
        report = step_dir / "report.json"
        done = _step(
            "bundle-inspect",
            root,
            "--module",
            module,
            "--kind",
            kind,
            "--bundle-dir",
            bundle_dir,
            *deps,
            "--out",
            report,
        )
        assert done.returncode == 0, done.stderr
        args += ["--report", report]
        if kind == "eval":
            runs = []
            for n in (1, 2):
                run = step_dir / f"run{n}.json"
                assert _step("transform-run", root, "--report", report, "--run", n, *deps, "--out", run).returncode == 0
                runs += ["--transform-run", run]
            expansion = step_dir / "expansion.json"
            done = _step("expand", root, "--report", report, *deps, *runs, "--out", expansion)
            assert done.returncode == 0, done.stderr
            args += ["--expansion", expansion]
    return _step("assemble", root, "--repo-root", REPO, "--config", work / "config.json", *args, "--out", out)


def test_steps_compose_to_the_cli_release(tmp_path):
    root = EXAMPLES / "support"
    # the CLI build installs the dependencies into the cache; the steps import bundles from beside them
    cli_out = tmp_path / "cli-release"
    assert run_cli("build", root, "-o", cli_out).code == 0
    from trunchbull.compile.deps import find_dependencies
    from trunchbull.node.dependencies import install
    from trunchbull.node.toolchain import toolchain

    deps_dir = install(find_dependencies(root, REPO), toolchain())
    out = tmp_path / "steps-release"
    done = build_with_steps(root, tmp_path / "steps", out, deps_dir)
    assert done.returncode == 0, done.stderr
    assert _tree_bytes(out) == _tree_bytes(cli_out)


def test_steps_with_separate_transformer_runs_match_the_cli(tmp_path):
    root = EXAMPLES / "data"
    cli_out = tmp_path / "cli-release"
    assert run_cli("build", root, "-o", cli_out).code == 0
    out = tmp_path / "steps-release"
    done = build_with_steps(root, tmp_path / "steps", out, None)
    assert done.returncode == 0, done.stderr
    assert _tree_bytes(out) == _tree_bytes(cli_out)
    manifest = orjson.loads((out / "release.json").read_bytes())
    assert any(e["id"] == "trivia" for e in manifest["evals"])


def test_separate_transformer_runs_still_catch_nondeterminism(tmp_path):
    root = write_tree(
        tmp_path / "b",
        {
            "evals/gen.ts": 'export default { id: "gen", evaluate: { kind: "non_empty" },'
            ' cases: { transformer: "./t.ts", sources: { s: "./s.txt" } } }\n',
            "evals/t.ts": 'export default { name: "t", transform: ({ s }) => [{ id: "c", prompt: s.content,'
            ' data: { tz: new Date().getTimezoneOffset() } }] }\n',
            "evals/s.txt": "hello\n",
        },
    )
    done = build_with_steps(root, tmp_path / "steps", tmp_path / "out", None)
    assert done.returncode == 1
    assert "error[transformer-nondeterministic]" in done.stderr and "data.tz" in done.stderr
    assert not (tmp_path / "out").exists()


def test_assemble_with_errors_writes_nothing(tmp_path):
    root = write_tree(tmp_path / "b", {"evals/a.ts": 'export default { id: "a", prompt: "p" }\n'})
    work = tmp_path / "w"
    assert _step("config", root, "--out", work / "config.json").returncode == 0
    assert (
        _step(
            "bundle-inspect",
            root,
            "--module",
            "evals/a.ts",
            "--kind",
            "eval",
            "--bundle-dir",
            work / "b",
            "--out",
            work / "r.json",
        ).returncode
        == 0
    )
    assert _step("expand", root, "--report", work / "r.json", "--out", work / "e.json").returncode == 0
    done = _step(
        "assemble",
        root,
        "--config",
        work / "config.json",
        "--report",
        work / "r.json",
        "--expansion",
        work / "e.json",
        "--out",
        work / "release",
    )
    assert done.returncode == 1
    assert "evals/a.ts" in done.stderr and "error[eval-shape]" in done.stderr
    assert not (work / "release").exists()


def test_discovered_symlink_leaving_the_root_is_rejected(tmp_path):
    outside = write_tree(
        tmp_path / "elsewhere", {"x.ts": 'export default { id: "x", prompt: "p", evaluate: { kind: "non_empty" } }\n'}
    )
    root = write_tree(
        tmp_path / "b", {"evals/ok.ts": 'export default { id: "ok", prompt: "p", evaluate: { kind: "non_empty" } }\n'}
    )
    (root / "evals" / "linked.ts").symlink_to(outside / "x.ts")
    result = run_cli("build", root, "-o", tmp_path / "out", "--json")
    assert result.code == 1
    [diag] = result.diagnostics
    assert (diag["file"], diag["code"]) == ("evals/linked.ts", "symlink-outside-root")
    assert not (tmp_path / "out").exists()


def test_import_outside_the_repository_is_rejected(tmp_path):
    write_tree(tmp_path / "shared", {"prompts.ts": 'export const P = "hi"\n'})
    repo = write_tree(
        tmp_path / "repo",
        {
            "pants.toml": "",
            "bench/evals/a.ts": 'import { P } from "../../../shared/prompts"\n'
            'export default { id: "a", prompt: P, evaluate: { kind: "non_empty" } }\n',
        },
    )
    result = run_cli("build", repo / "bench", "-o", tmp_path / "out", "--json")
    assert result.code == 1
    [diag] = result.diagnostics
    assert (diag["file"], diag["line"], diag["code"]) == ("evals/a.ts", 1, "import-outside-repo")


def test_monorepo_helper_outside_the_benchmark_root_is_bundled(tmp_path):
    repo = write_tree(
        tmp_path / "repo",
        {
            "pants.toml": "",
            "shared/prompts.ts": 'export const P = "What is 2+2?"\n',
            "bench/evals/a.ts": 'import { P } from "../../shared/prompts"\n'
            'export default { id: "a", prompt: P, evaluate: { kind: "contains", expected: "4" } }\n',
        },
    )
    out = tmp_path / "out"
    result = run_cli("build", repo / "bench", "-o", out)
    assert result.code == 0, result.stderr
    manifest = orjson.loads((out / "release.json").read_bytes())
    assert "../shared/prompts.ts" in manifest["inputs"]
    assert orjson.loads((out / "cases.jsonl").read_bytes().splitlines()[0])["prompt"] == "What is 2+2?"


def test_null_evaluate_is_not_taken_for_a_function(tmp_path):
    root = write_tree(tmp_path / "b", {"evals/a.ts": 'export default { id: "a", prompt: "p", evaluate: null }\n'})
    result = run_cli("build", root, "-o", tmp_path / "out", "--json")
    assert result.code == 1
    assert [(d["file"], d["code"]) for d in result.diagnostics] == [("evals/a.ts", "evaluator-invalid")]


def test_module_printing_at_import_does_not_disturb_inspection(tmp_path):
    root = write_tree(
        tmp_path / "b",
        {
            "evals/a.ts": 'console.log("{\\"not\\": \\"a report\\"}")\nprocess.stdout.write("raw text\\n")\n'
            'export default { id: "a", prompt: "p", evaluate: { kind: "non_empty" } }\n',
            "evals/b.ts": 'export default { id: "b", prompt: "q", evaluate: { kind: "non_empty" } }\n',
        },
    )
    out = tmp_path / "out"
    result = run_cli("build", root, "-o", out)
    assert result.code == 0, result.stderr
    assert [
        c["id"] for c in orjson.loads(b"[" + b",".join((out / "cases.jsonl").read_bytes().splitlines()) + b"]")
    ] == ["a", "b"]


BROKEN_CONFIG = 'export default {\n  protocolVersion: 1,\n  titel: "C",\n  version: "1",\n}\n'
BROKEN_EVAL = (
    'import { SYSTEM } from "./missing"\n'
    'export default { id: "a", systemPrompt: SYSTEM, cases: [{ id: "a.1", prompt: "hi", evaluate: { kind: "non_empty" } }] }\n'
)


def test_steps_run_from_the_repository_root_print_the_clis_diagnostics(tmp_path):
    """Pants runs the steps from the repository root with the benchmark's repository-relative
    path: their diagnostics are the lines `trunchbull build benchmarks/c` prints there, every
    error of the run included (a config error does not stop the later stages)."""
    repo = write_tree(
        tmp_path / "repo", {"benchmarks/c/benchmark.config.ts": BROKEN_CONFIG, "benchmarks/c/evals/a.ts": BROKEN_EVAL}
    )
    (repo / ".git").mkdir()
    cli = run_cli("build", "benchmarks/c", cwd=repo)
    assert cli.code == 1
    *cli_lines, summary = cli.stderr.splitlines()
    assert summary == "trunchbull: 2 errors; nothing was written"

    def step(*args) -> subprocess.CompletedProcess:
        env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
        return subprocess.run(
            [sys.executable, "-m", "trunchbull.compile.steps", *map(str, args)],
            env=env,
            capture_output=True,
            text=True,
            cwd=repo,
        )

    config = step("config", "benchmarks/c", "--repo-root", ".", "--out", "w/config.json")
    assert config.returncode == 1
    assert config.stderr.splitlines() == cli_lines[2:]  # the config's error; the bundle error comes first
    assert orjson.loads((repo / "w/config.json").read_bytes())["evals"] == ["evals/a.ts"]
    args = ["--report", "w/r.json", "--expansion", "w/e.json"]
    assert (
        step(
            *"bundle-inspect benchmarks/c --module evals/a.ts --kind eval".split(),
            "--bundle-dir",
            "w/b",
            "--out",
            "w/r.json",
        ).returncode
        == 0
    )
    assert step("expand", "benchmarks/c", "--report", "w/r.json", "--out", "w/e.json").returncode == 0
    assembled = step(
        "assemble", "benchmarks/c", "--repo-root", ".", "--config", "w/config.json", *args, "--out", "w/rel"
    )
    assert assembled.returncode == 1
    assert assembled.stderr.splitlines() == cli_lines
    assert cli_lines[0].startswith('benchmarks/c/evals/a.ts:1:24: error[bundle]: Could not resolve "./missing"')
    assert cli_lines[2].startswith("benchmarks/c/benchmark.config.ts:3:3: error[config-unknown-key]")
