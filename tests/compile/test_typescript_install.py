"""The on-demand install of `check --types`'s TypeScript with the real npm, each
test into a fresh cache directory: offline or without npm it is a usage error
that says what to do and leaves nothing behind; two first uses at once both
succeed with one install. (The install that works, and its reuse, are
test_types.py's module fixture.)"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO, run_cli
from trunchbull.common import exit_codes

MINIMAL = EXAMPLES / "minimal"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _typescript_dirs(cache: Path) -> list[str]:
    parent = cache / "typescript"
    return sorted(p.name for p in parent.iterdir()) if parent.exists() else []


@pytest.mark.parametrize(
    ("network", "code"),
    [
        ({"npm_config_offline": "true"}, "ENOTCACHED"),  # npm told to stay offline
        ({"npm_config_registry": "http://127.0.0.1:{port}/", "npm_config_fetch_retries": "0"}, "ECONNREFUSED"),
    ],
    ids=["offline", "registry-unreachable"],
)
def test_without_the_registry_the_first_check_types_is_a_usage_error_saying_what_to_do(tmp_path, network, code):
    cache = tmp_path / "cache"
    env = {
        "TRUNCHBULL_CACHE_DIR": str(cache),
        "npm_config_cache": str(tmp_path / "npm-cache"),  # nothing cached: npm needs the registry
        **{k: v.format(port=_closed_port()) for k, v in network.items()},
    }
    for flags in ([], ["--json"]):
        result = run_cli("check", "--types", *flags, MINIMAL, env=env)
        assert result.code == exit_codes.USAGE, result.stderr
        assert "Traceback" not in result.stderr and result.stdout == ""
        installing, error = result.stderr.splitlines()[:2]
        assert installing.startswith("trunchbull: installing TypeScript 7.0.2 for check --types into ")
        target = installing.split(" into ", 1)[1].split(" (", 1)[0]
        assert error.startswith(
            "trunchbull: error: check --types: TypeScript 7.0.2 is installed once, from the npm registry, "
            f"and npm could not reach it ({code}: request to "
        ), result.stderr
        assert "Connect to the network (or set npm's registry or proxy for this machine) and run again" in result.stderr
        assert f"offline, copy {target} from a machine of the same OS and CPU" in result.stderr
        assert "check` without --types does not need it." in result.stderr
        assert _typescript_dirs(cache) == []  # no half-installed tree, no staging directory

    plain = run_cli("check", MINIMAL, env=env)  # the rest of check does not need TypeScript
    assert plain.code == exit_codes.OK, plain.stderr


def test_without_npm_the_first_check_types_is_a_usage_error(tmp_path):
    cache = tmp_path / "cache"
    empty = tmp_path / "bin"
    empty.mkdir()
    result = run_cli("check", "--types", MINIMAL, env={"TRUNCHBULL_CACHE_DIR": str(cache), "PATH": str(empty)})
    assert result.code == exit_codes.USAGE, result.stderr
    assert result.stderr.startswith("trunchbull: error: check --types: npm is required once, to install TypeScript")
    assert "install npm (it comes with Node.js) and run again" in result.stderr
    assert _typescript_dirs(cache) == []


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm")
def test_two_first_uses_at_once_both_succeed_with_one_install(tmp_path):
    cache = tmp_path / "cache"
    env = {**os.environ, "TRUNCHBULL_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "trunchbull", "check", "--types", str(MINIMAL)]
    both = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    for proc in both:
        stdout, stderr = proc.communicate()
        assert proc.returncode == 0, stderr
        assert stdout.startswith("ok: ")
    installed = _typescript_dirs(cache)
    assert len(installed) == 1 and ".tmp" not in installed[0]  # one install, no staging left
    assert (cache / "typescript" / installed[0] / ".installed").is_file()
