"""The judge requests a run's samples were graded with (SPEC §4.1), apart
from the model's own figures: per eval and overall, how many, how many
failed or came from the cache, their tokens and cost (run_stats.py's rules:
an unknown cost makes the sum unknown), and a panel's agreement
(agreement.py) over the samples every one of its judges graded."""

from __future__ import annotations

from typing import Iterable

from trunchbull.stats.agreement import agreement
from trunchbull.stats.run_stats import DIGITS, rounded, sample_cost, sample_tokens

GRADES = ("C", "P", "I")  # a judge's grades (evaluators/verdicts.py), the categories of a panel's agreement


class JudgeTally:
    """The judge requests a group's samples were graded with (SPEC §4.1),
    apart from the model's own figures: how many, how many failed or came
    from the cache, their tokens and cost (the same rules: an unknown cost
    makes the sum unknown)."""

    __slots__ = (
        "requests",
        "errors",
        "cached",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "cost",
        "cost_known",
        "grades",
    )

    def __init__(self) -> None:
        self.requests = self.errors = self.cached = 0
        self.input_tokens = self.output_tokens = self.total_tokens = 0
        self.cost = 0.0
        self.cost_known = True
        self.grades: dict[tuple, list] = {}  # (caseId, repeat) → each judge's grade (a panel: several)

    def add(self, judgment: dict) -> None:
        self.requests += 1
        self.errors += judgment.get("outcome") == "error"
        self.cached += bool(judgment.get("cached"))
        tokens_in, tokens_out, tokens_total = sample_tokens(judgment)
        self.input_tokens += tokens_in or 0
        self.output_tokens += tokens_out or 0
        self.total_tokens += tokens_total or 0
        cost = sample_cost(judgment)
        if cost is None:
            self.cost_known = False
        else:
            self.cost += cost
        self.grades.setdefault((judgment.get("caseId"), judgment.get("repeat")), []).append(judgment.get("grade"))

    def statistics(self) -> dict:
        out = {
            "requests": self.requests,
            "errors": self.errors,
            "cached": self.cached,
            "tokens": {"input": self.input_tokens, "output": self.output_tokens, "total": self.total_tokens},
            "cost": round(self.cost, DIGITS) if self.cost_known else None,
        }
        panel = max((len(grades) for grades in self.grades.values()), default=0)
        if panel >= 2:
            out["panel"] = self.panel_agreement(panel)
        return out

    def panel_agreement(self, panel: int) -> dict:
        """A panel's agreement (stats/agreement.py) over the samples every one of its judges graded."""
        rows = [
            [grades.count(grade) for grade in GRADES]
            for grades in self.grades.values()
            if len(grades) == panel and all(grade in GRADES for grade in grades)
        ]
        found = agreement(rows)
        return {
            "judges": panel,
            "samples": found.samples,
            "percentAgreement": rounded(found.percent),
            "fleissKappa": rounded(found.kappa),
        }


def judge_tallies(judgments: Iterable[dict]) -> tuple[dict[str, JudgeTally], JudgeTally]:
    """Each eval's judge tally (by the judgments' `evalId`) and the overall one."""
    evals: dict[str, JudgeTally] = {}
    overall = JudgeTally()
    for judgment in judgments:
        eval_id = judgment.get("evalId")
        if isinstance(eval_id, str):
            evals.setdefault(eval_id, JudgeTally()).add(judgment)
        overall.add(judgment)
    return evals, overall
