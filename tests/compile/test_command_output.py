"""What `init` and `inspect` print: the command the user actually has, and
a tool list in columns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.compile.helpers import build_ok
from tests.conftest import EXAMPLES, REPO, run_cli, write_tree


def _next_lines(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("next: "))
    return lines[start:]


def test_init_writes_package_json_with_its_lockfile_and_builds_without_warnings(tmp_path):
    target = tmp_path / "My Bench"
    result = run_cli("init", target)
    assert result.code == 0, result.stderr
    assert orjson.loads((target / "package.json").read_bytes()) == {
        "name": "my-bench",
        "private": True,
        "type": "module",
    }
    lock = orjson.loads((target / "package-lock.json").read_bytes())
    assert lock["lockfileVersion"] == 3 and lock["packages"] == {"": {"name": "my-bench"}}
    _, manifest = build_ok(target, tmp_path / "out")
    assert manifest["dependencies"]["locked"] is True and manifest["warnings"] == []
    assert {"package.json", "package-lock.json"} <= set(manifest["inputs"])


def test_init_run_through_the_checkout_launcher_names_the_launcher(tmp_path):
    """`./trunchbull init x` from the checkout suggests `./trunchbull …`; from
    elsewhere, the launcher's relative or absolute path, whichever is shorter."""
    env = {k: v for k, v in os.environ.items() if k != "TRUNCHBULL_LAUNCHER"}
    here = subprocess.run(
        ["./trunchbull", "init", str(tmp_path / "a")], cwd=REPO, capture_output=True, text=True, env=env
    )
    assert here.returncode == 0, here.stderr
    assert _next_lines(here.stdout) == [
        f"next: ./trunchbull build {tmp_path / 'a'}",
        f"      ./trunchbull check --types {tmp_path / 'a'}   (also checks the modules' types)",
    ]
    elsewhere = subprocess.run(
        [str(REPO / "trunchbull"), "init", "b"], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert elsewhere.returncode == 0, elsewhere.stderr
    relative = os.path.relpath(REPO / "trunchbull", tmp_path)
    shown = relative if len(relative) <= len(str(REPO / "trunchbull")) else str(REPO / "trunchbull")
    assert _next_lines(elsewhere.stdout)[0] == f"next: {shown} build b"


def test_init_run_as_an_installed_command_or_a_module(tmp_path):
    """An installed console script named `trunchbull` on PATH: `trunchbull …`;
    `python -m trunchbull`: that."""
    bin_dir = write_tree(
        tmp_path / "bin",
        {"trunchbull": f"#!{sys.executable}\nimport sys\nfrom trunchbull.cli import main\nsys.exit(main())\n"},
    )
    (bin_dir / "trunchbull").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "TRUNCHBULL_LAUNCHER"}
    env.update(PYTHONPATH=str(REPO / "src"), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")
    installed = subprocess.run(["trunchbull", "init", "c"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert installed.returncode == 0, installed.stderr
    assert _next_lines(installed.stdout)[0] == "next: trunchbull build c"
    module = run_cli("init", tmp_path / "d", cwd=tmp_path, env={"TRUNCHBULL_LAUNCHER": ""})
    assert _next_lines(module.stdout)[0] == f"next: {Path(sys.executable).name} -m trunchbull build {tmp_path / 'd'}"


def test_inspect_aligns_the_tool_list(tmp_path):
    build_ok(EXAMPLES / "files", tmp_path / "rel")
    text = run_cli("inspect", tmp_path / "rel").stdout
    tools = text.split("tools:\n", 1)[1].splitlines()
    names = ["mkdir", "write_file", "read_file", "list"]
    assert [line.split()[0] for line in tools] == names
    columns = {line.index(line.split(maxsplit=1)[1]) for line in tools}
    assert columns == {2 + len("write_file") + 2}, tools  # every description starts in one column
