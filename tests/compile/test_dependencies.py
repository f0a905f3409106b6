"""SPEC §3.3 "Dependencies" / seed "Tools": the nearest package.json from the
benchmark root up to the repository root; install from its lockfile."""

from __future__ import annotations

import hashlib

import orjson

from tests.compile.helpers import SUPPORT, build_ok, one_case, tool_module, with_deps
from tests.conftest import write_tree


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_locked_dependencies_are_recorded_and_shipped_with_run_time_bundles(bench):
    root = bench(with_deps({"evals/e.ts": one_case("e", tools='["lookup"]'), "tools/t.ts": tool_module("lookup")}))
    cases, manifest = build_ok(root)
    out = root.parent / f"{root.name}-release"
    deps = manifest["dependencies"]
    assert deps["locked"] is True and deps["lockfile"] == "package-lock.json"
    assert deps["sha256"] == {
        "package.json": sha((SUPPORT / "package.json").read_bytes()),
        "package-lock.json": sha((SUPPORT / "package-lock.json").read_bytes()),
    }
    assert (out / "package.json").read_bytes() == (SUPPORT / "package.json").read_bytes()
    assert (out / "package-lock.json").read_bytes() == (SUPPORT / "package-lock.json").read_bytes()
    assert {"package.json", "package-lock.json"} <= set(manifest["inputs"])
    assert manifest["warnings"] == []


def test_dependencies_without_run_time_bundles_are_not_shipped(bench):
    root = bench(with_deps({"evals/e.ts": one_case("e")}))
    _, manifest = build_ok(root)
    out = root.parent / f"{root.name}-release"
    assert manifest["counts"]["modules"] == 0
    assert not (out / "package.json").exists()
    assert manifest["dependencies"]["locked"] is True


def test_unlocked_dependencies_install_and_warn(bench):
    root = bench(
        {
            "package.json": '{"name": "unlocked-bench", "private": true}\n',
            "evals/e.ts": 'export default { id: "e", prompt: "p", evaluate: ({ output }) => output.length > 0 }\n',
        }
    )
    result_cases, manifest = build_ok(root)
    assert manifest["dependencies"]["locked"] is False and manifest["dependencies"]["lockfile"] is None
    assert any("dependencies-unlocked" in w for w in manifest["warnings"])
    out = root.parent / f"{root.name}-release"
    assert (out / "package.json").is_file() and not (out / "package-lock.json").exists()


def test_package_json_is_found_up_to_the_repository_root(tmp_path):
    repo = write_tree(
        tmp_path / "repo",
        {
            "pants.toml": "",
            "package.json": (SUPPORT / "package.json").read_text(),
            "package-lock.json": (SUPPORT / "package-lock.json").read_text(),
            "benchmarks/b/evals/e.ts": one_case("e", tools='["lookup"]'),
            "benchmarks/b/tools/t.ts": tool_module("lookup"),
        },
    )
    _, manifest = build_ok(repo / "benchmarks/b", tmp_path / "out")
    assert manifest["dependencies"]["locked"] is True
    assert [t["name"] for t in manifest["tools"]] == ["lookup"]
    assert "../../package-lock.json" in manifest["inputs"]


def test_package_json_beyond_the_repository_root_is_ignored(tmp_path):
    write_tree(tmp_path, {"package.json": '{"name": "outer", "private": true}\n'})
    repo = write_tree(tmp_path / "repo", {".git/HEAD": "ref: refs/heads/main\n", "evals/e.ts": one_case("e")})
    _, manifest = build_ok(repo, tmp_path / "out")
    assert manifest["dependencies"] is None


def test_no_package_json_means_no_dependencies(bench):
    root = bench({"evals/e.ts": one_case("e")})
    _, manifest = build_ok(root)
    assert manifest["dependencies"] is None
    assert orjson.loads((root.parent / f"{root.name}-release" / "release.json").read_bytes())["counts"]["modules"] == 0
