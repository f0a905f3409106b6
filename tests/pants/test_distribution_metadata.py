"""The `trunchbull` and `trunchbull-pants` distributions are versioned together, and the plugin's
default lockfile for the core follows the core's own lock (fast checks; the wheels themselves are
built and used by test_adoption.py)."""

from __future__ import annotations

import importlib.util
import json
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


def _core_lock():
    spec = importlib.util.spec_from_file_location("core_lock", REPO / "tools/core_lock.py")
    assert spec and spec.loader
    core_lock = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(core_lock)
    return core_lock


def test_core_lockfile_pins_what_the_core_imports_with_all_its_hashes() -> None:
    core_lock = _core_lock()
    lock = (REPO / "third_party/python/pants-python-default.lock").read_text()
    rendered = core_lock.render(lock, "9.9.9")
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+) \\$", rendered, re.M))
    locked = dict(re.findall(r'"project_name": "([^"]+)",\s*"requires_dists".*?"version": "([^"]+)"', lock, re.S))
    assert pins.pop("trunchbull") == "9.9.9"
    # What the build path imports and what those require; the resolve's test-only libraries are
    # not installed into the core's PEX.
    assert sorted(pins) == [
        "attrs",
        "jsonschema",
        "jsonschema-specifications",
        "orjson",
        "polars",
        "polars-runtime-32",
        "referencing",
        "rpds-py",
        "typing-extensions",
    ]
    assert {"numpy", "scipy"} <= set(locked)
    assert all(locked[name] == version for name, version in pins.items())
    body = json.loads("\n".join(line for line in lock.splitlines() if not line.startswith("//")))
    hashes = {
        r["project_name"]: {a["hash"] for a in r["artifacts"]}
        for r in body["locked_resolves"][0]["locked_requirements"]
    }
    for block in re.split(r"\n(?=\S)", rendered.split("\n\n", 1)[1]):
        name = block.split("==", 1)[0]
        if name in hashes:
            assert set(re.findall(r"--hash=sha256:([0-9a-f]{64})", block)) == hashes[name], name
    assert "@TRUNCHBULL_WHEEL_SHA256@" in rendered and "://" not in rendered  # no index or URL in it


def test_the_closure_follows_requirements_without_extras() -> None:
    locked = [
        {"project_name": "a", "requires_dists": ["b>=1", 'c; extra == "x"']},
        {"project_name": "b", "requires_dists": ['d_e; python_version < "3.13"']},
        {"project_name": "c", "requires_dists": []},
        {"project_name": "d-e", "requires_dists": []},
        {"project_name": "unused", "requires_dists": []},
    ]
    closure = _core_lock().runtime_closure(locked, {"a", "os"})
    assert [r["project_name"] for r in closure] == ["a", "b", "d-e"]
