"""The one npm installer (node/installer.py), with the real npm: a complete
install lands with its marker, a failed or refused one leaves nothing."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from trunchbull.node.installer import MARKER, InstallFailed, install_into, is_installed

NPM = shutil.which("npm")
pytestmark = pytest.mark.skipif(NPM is None, reason="needs npm")

PACKAGE = json.dumps({"name": "empty", "version": "1.0.0", "private": True}).encode()
LOCK = json.dumps(
    {
        "name": "empty",
        "version": "1.0.0",
        "lockfileVersion": 3,
        "requires": True,
        "packages": {"": {"name": "empty", "version": "1.0.0"}},
    }
).encode()
CI = [str(NPM), "ci", "--no-audit", "--no-fund", "--loglevel=error", "--offline"]


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".tmp" in p.name)


def test_a_complete_install_lands_with_its_marker_and_no_staging(tmp_path):
    target = tmp_path / "cache" / "key"
    target.parent.mkdir()
    assert install_into(target, {"package.json": PACKAGE, "package-lock.json": LOCK}, CI) == target
    assert is_installed(target) and (target / "package.json").read_bytes() == PACKAGE
    assert _leftovers(target.parent) == []


def test_an_installed_target_is_not_installed_again(tmp_path):
    target = tmp_path / "key"
    target.mkdir()
    (target / MARKER).write_text("")
    # a command that would fail: it is never run
    assert install_into(target, {"package.json": b"not json"}, CI) == target


def test_a_failed_install_raises_with_npm_output_and_leaves_nothing(tmp_path):
    target = tmp_path / "key"
    with pytest.raises(InstallFailed) as failed:
        install_into(target, {"package.json": b"{not json", "package-lock.json": LOCK}, CI)
    assert failed.value.output  # npm said why
    assert not target.exists() and _leftovers(tmp_path) == []


def test_a_staged_tree_the_check_refuses_is_not_installed(tmp_path):
    target = tmp_path / "key"

    def refuse(staged: Path) -> None:
        assert (staged / "package.json").is_file()  # the check sees the staged install
        raise RuntimeError("binary does not load")

    with pytest.raises(RuntimeError, match="does not load"):
        install_into(target, {"package.json": PACKAGE, "package-lock.json": LOCK}, CI, check=refuse)
    assert not target.exists() and _leftovers(tmp_path) == []


@pytest.mark.skipif(shutil.which("node") is None, reason="needs a Node on PATH besides the pinned one")
def test_npm_under_the_pinned_node_keeps_the_machines_global_config(tmp_path, monkeypatch):
    """A machine's npm keeps its registry's CA bundle or proxy in `<prefix>/etc/npmrc` beside its
    Node; npm run by the pinned Node would look beside that one instead (and fail on such a
    machine with an empty npm cache)."""
    import subprocess

    from trunchbull.node.installer import with_node_on_path
    from trunchbull.node.toolchain import toolchain

    monkeypatch.delenv("npm_config_globalconfig", raising=False)
    monkeypatch.delenv("NPM_CONFIG_GLOBALCONFIG", raising=False)

    def globalconfig(env: dict) -> str:
        asked = subprocess.run([NPM, "config", "get", "globalconfig"], env=env, capture_output=True, text=True)
        assert asked.returncode == 0, asked.stderr
        return asked.stdout.strip()

    home = {"HOME": str(tmp_path)}
    machines = globalconfig({**os.environ, **home})  # npm as the machine runs it
    pinned = toolchain().node
    assert not machines.startswith(str(pinned.parent.parent))
    assert globalconfig({**with_node_on_path(pinned), **home}) == machines
    # a global config the user names wins
    named = tmp_path / "npmrc"
    monkeypatch.setenv("npm_config_globalconfig", str(named))
    assert globalconfig({**with_node_on_path(pinned), **home}) == str(named)
