"""A panel of judges (SPEC §4.1): `--judge` given three times, three scripted
judges at one endpoint that disagree in a known pattern (each case's prompt
spells what judges a, b and c reply). The verdict is the majority's, the score
the mean of the judges that graded, no majority an error; every judge's
verdict is recorded and replayed; the summary's agreement equals Fleiss'
formula counted pair by pair (tests/stats/test_agreement.py's oracle)."""

from __future__ import annotations

import re

from tests.run.conftest import read_jsonl
from tests.stats.test_agreement import pairwise
from tests.support.chat_server import Reply

JUDGES = ["openai-compatible:judge-a", "openai-compatible:judge-b", "openai-compatible:judge-c"]


def panel_rule(text: str, model: str):
    if "[BEGIN DATA]" not in text:
        return None
    letters = re.search(r"panel:([CPI?]{3})", text).group(1)
    letter = letters["abc".index(model[-1])]
    return Reply(content="I cannot tell." if letter == "?" else f"Reasoning of {model}.\nGRADE: {letter}")


def test_a_panel_grades_by_majority_and_its_agreement_is_fleiss(built, cli, server, tmp_path):
    server.judge(panel_rule)
    release = built("panel")
    judges = [arg for judge in JUDGES for arg in ("--judge", judge)]
    run = cli(
        "run", release, "--model", "echo", *judges, "--judge-base-url", server.url, "-o", tmp_path / "run", "--json"
    )
    assert run.code == 1, run.stderr  # one sample without a majority
    rows = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "results.jsonl")}
    assert {case: (row["outcome"], row["score"]) for case, row in rows.items()} == {
        "panel.ccc": ("pass", 1.0),
        "panel.cci": ("pass", 1 / 3 * 2),
        "panel.cii": ("fail", 1 / 3),
        "panel.iii": ("fail", 0.0),
        "panel.cpi": ("fail", 0.5),  # one pass, two fails (P is not a pass)
        "panel.cni": ("error", None),  # C, no grade, I: no verdict has more than half the panel
        "panel.ccn": ("pass", 1.0),  # two passes of three: the judge without a grade withholds its vote
    }
    assert rows["panel.cni"]["details"]["error"]["kind"] == "judge-no-majority"
    assert rows["panel.cci"]["details"]["grades"] == ["C", "C", "I"] and rows["panel.cci"]["details"]["grade"] == "C"
    judged = rows["panel.cpi"]["details"]["judges"]
    assert [(j["model"], j["grade"]) for j in judged] == list(zip(JUDGES, ["C", "P", "I"]))
    assert judged[1]["explanation"] == "Reasoning of judge-b.\nGRADE: P"  # each judge's reasoning, for the report

    lines = read_jsonl(tmp_path / "run" / "judgments.jsonl")
    assert len(lines) == 21 and len(server.received()) == 21
    assert {(line["caseId"], line["judge"]) for line in lines} == {(case, judge) for case in rows for judge in JUDGES}

    labels = [list(spelled) for spelled in ("CCC", "CCI", "CII", "III", "CPI")]  # the samples all three graded
    observed, kappa = pairwise(labels)
    panel = run.json["evals"]["panel"]["judge"]["panel"]
    assert panel == {
        "judges": 3,
        "samples": 5,
        "percentAgreement": round(observed, 6),
        "fleissKappa": round(kappa, 6),
    }
    assert run.json["evals"]["panel"]["judge"]["requests"] == 21
    assert "a panel of 3 agreed on" in cli("report", tmp_path / "run", "-o", tmp_path / "r.html").stdout

    resumed = cli("run", release, "-o", tmp_path / "run", "--resume", "--json")
    assert len(server.received()) == 21  # every judge's verdict replayed
    assert resumed.json["evals"]["panel"]["judge"]["panel"] == panel
