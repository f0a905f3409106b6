"""The `trunchbull` and `trunchbull-pants` distributions are versioned together, and the plugin's
default lockfile for the core follows the core's own lock (fast checks; the wheels themselves are
built and used by test_adoption.py)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

from workspace import REPO


def _assigned(path: str, name: str) -> str:
    match = re.search(rf'^{name} = "([^"]+)"$', (REPO / path).read_text(), re.M)
    assert match, f"{path} assigns no {name}"
    return match.group(1)


def test_both_distributions_have_one_version() -> None:
    core = _assigned("src/trunchbull/__init__.py", "__version__")
    assert _assigned("rules/trunchbull_pants/version.py", "VERSION") == core
    assert _assigned("build-support/prelude.py", "TRUNCHBULL_VERSION") == core
    assert f"trunchbull=={core} \\\n" in (REPO / "third_party/python/trunchbull.lock.in").read_text()


def test_core_lockfile_template_is_up_to_date() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "tools/core_lock.py"), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_core_lockfile_pins_every_locked_distribution_with_all_its_hashes() -> None:
    spec = importlib.util.spec_from_file_location("core_lock", REPO / "tools/core_lock.py")
    assert spec and spec.loader
    core_lock = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(core_lock)
    lock = (REPO / "third_party/python/pants-python-default.lock").read_text()
    rendered = core_lock.render(lock, "9.9.9")
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+) \\$", rendered, re.M)
    locked = re.findall(r'"project_name": "([^"]+)",\s*"requires_dists".*?"version": "([^"]+)"', lock, re.S)
    assert ("trunchbull", "9.9.9") in pins
    assert sorted(p for p in pins if p[0] != "trunchbull") == sorted(locked)
    hashes = set(re.findall(r"--hash=sha256:([0-9a-f]{64})", rendered))
    assert hashes == set(re.findall(r'"hash": "([0-9a-f]{64})"', lock))
    assert "@TRUNCHBULL_WHEEL_SHA256@" in rendered and "://" not in rendered  # no index or URL in it
