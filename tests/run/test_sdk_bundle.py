"""The AI SDK bundle of the run workers (trunchbull/run/sdk_bundle.py): built
by the toolchain's esbuild once per provider, exporting what the worker
calls, imported by the pinned Node."""

from __future__ import annotations

import json
import subprocess

import pytest
from trunchbull.node.toolchain import toolchain
from trunchbull.run.providers import PROVIDERS
from trunchbull.run.sdk_bundle import AI_EXPORTS, sdk_bundle


def exports_of(bundle) -> dict[str, str]:
    script = (
        f"const m = await import({json.dumps(bundle.as_uri())});"
        "console.log(JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v]))));"
    )
    out = subprocess.run(
        [str(toolchain().node), "--input-type=module", "-e", script], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_each_provider_gets_the_ai_sdk_calls_and_its_factory(provider, tmp_path, monkeypatch):
    tc = toolchain()  # the installed one, before the cache moves
    monkeypatch.setenv("TRUNCHBULL_CACHE_DIR", str(tmp_path))
    bundle = sdk_bundle(tc, provider)
    assert bundle.parent == tmp_path / "sdk"
    expected = {*AI_EXPORTS, *([PROVIDERS[provider].factory] if PROVIDERS[provider].package else [])}
    assert exports_of(bundle) == {name: "function" for name in expected}
    assert sorted(p.name for p in bundle.parent.iterdir()) == [bundle.name]  # no entry or staging file left


def test_built_once_then_reused_and_one_per_provider(tmp_path, monkeypatch):
    tc = toolchain()
    monkeypatch.setenv("TRUNCHBULL_CACHE_DIR", str(tmp_path))
    first = sdk_bundle(tc, "openai")
    built = first.stat().st_mtime_ns
    assert sdk_bundle(tc, "openai") == first
    assert first.stat().st_mtime_ns == built
    assert sdk_bundle(tc, "anthropic") != first
    # the built-in models share the bundle of `ai` alone
    assert sdk_bundle(tc, "echo") == sdk_bundle(tc, "replay")
