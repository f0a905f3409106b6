"""Samples and their cache keys (SPEC §8.4), on a real built release."""

from __future__ import annotations

import hashlib

import orjson
from trunchbull.release.loaded import load_release
from trunchbull.run.samples import cache_document, offered_tools, plan, select_cases
from trunchbull.run.settings import Filters, RunSettings

MODEL = {"provider": "openai-compatible", "model": "m", "baseUrl": "http://127.0.0.1:1/v1"}


def test_cache_key_is_the_sha256_of_the_canonical_json_of_the_spec_fields(built):
    release = load_release(built("agent"))
    settings = RunSettings(temperature=0.5, seed=3, maxSteps=4)
    samples = plan(release, select_cases(release, Filters()), 2, MODEL, settings)
    tools = {t["name"]: t for t in release.manifest.tools}
    assert len(samples) == 2 * len(release.cases)
    for sample in samples:
        document = cache_document(
            MODEL, settings, sample.case, offered_tools(tools, sample.case["tools"]), sample.repeat
        )
        assert sample.key == hashlib.sha256(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest()
    assert len({s.key for s in samples}) == len(samples)
    order = samples[4].case
    assert order["tools"] == ["lookup_order"]
    document = cache_document(MODEL, settings, order, offered_tools(tools, order["tools"]), 0)
    assert document["tools"][0]["bundle"].startswith("modules/") and document["settings"] == {
        "temperature": 0.5,
        "seed": 3,
    }


def test_everything_but_data_and_ids_changes_the_key(built):
    release = load_release(built("agent"))
    cases = select_cases(release, Filters(cases=("plain.one",)))
    base = plan(release, cases, 1, MODEL, RunSettings())[0].key
    assert plan(release, cases, 1, {**MODEL, "model": "n"}, RunSettings())[0].key != base
    assert plan(release, cases, 1, {**MODEL, "baseUrl": None}, RunSettings())[0].key != base
    assert plan(release, cases, 1, MODEL, RunSettings(topP=0.5))[0].key != base
    assert plan(release, cases, 1, MODEL, RunSettings(maxSteps=2))[0].key != base
    assert plan(release, cases, 1, MODEL, RunSettings(timeout=5, retries=0, concurrency=1))[0].key == base
    changed = [{**cases[0], "id": "other", "data": {"x": 1}}]
    assert plan(release, changed, 1, MODEL, RunSettings())[0].key == base  # same prompt, tools, settings
    assert plan(release, [{**cases[0], "systemPrompt": "Be brief."}], 1, MODEL, RunSettings())[0].key != base


def test_requests_never_carry_case_data(built):
    release = load_release(built("agent"))
    for sample in plan(release, select_cases(release, Filters(evals=("orders",))), 1, MODEL, RunSettings()):
        request = orjson.loads(sample.request())
        assert set(request) == {"k", "caseId", "repeat", "system", "prompt", "tools"}
        assert b"DATA-SECRET" not in sample.request()


def test_a_run_without_the_cache_plans_the_same_samples_without_keys(built):
    release = load_release(built("agent"))
    cases = select_cases(release, Filters())
    keyed = plan(release, cases, 3, MODEL, RunSettings())
    unkeyed = plan(release, cases, 3, MODEL, RunSettings(), keyed=False)
    assert [(s.k, s.case_id, s.repeat) for s in unkeyed] == [(s.k, s.case_id, s.repeat) for s in keyed]
    assert [s.request() for s in unkeyed] == [s.request() for s in keyed]
    assert all(s.key is None for s in unkeyed) and all(s.key for s in keyed)
