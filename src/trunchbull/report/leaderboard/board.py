"""The leaderboard of many runs (SPEC §9): one model × eval table over the
cases every run has, ranked, each model marked as indistinguishable from
the best or significantly below it.

* **Cases.** A case enters when every run has it (same case ID and eval).
  Cases only some runs have are left out and counted per run.
* **Cells.** Per run and eval (and overall): the pass rate and the mean
  score over the shared cases, each with its 95% interval (stats/intervals.py:
  Wilson on the clustered effective size), as in summary.json.
* **Ranking** by the overall mean score (then the pass rate, then the model).
* **Against the best.** Every other run is compared with the top one, paired
  over the cases both graded (stats/paired.py, as `compare`); the p-values of
  the K − 1 comparisons of a column are corrected with Holm's step-down
  method (stats/multiple.py). A model is *significantly below* the best when
  its corrected p-value is below 0.05 and its difference is negative, else
  *indistinguishable*.
* **Cost and tokens** per run, summed over the shared cases' samples;
  cost is null (unknown) when any sample's cost is unknown.

The joins and sums over the runs' samples are polars (one long frame of
every run's samples); the statistics are computed from the sums."""

from __future__ import annotations

from dataclasses import dataclass

from trunchbull.common.diagnostics import UsageError
from trunchbull.rundir.reader import RunDirectory
from trunchbull.stats.intervals import Moments, mean_interval
from trunchbull.stats.multiple import holm
from trunchbull.stats.paired import paired_difference
from trunchbull.stats.quantiles import CONFIDENCE

DIGITS = 6
ALPHA = 1 - CONFIDENCE
OVERALL = "overall"


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


@dataclass
class RunSamples:
    label: str
    run: RunDirectory


def labels(runs: list[RunDirectory]) -> list[str]:
    """Each run's model, with its directory when two runs share a model."""
    models = [r.model for r in runs]
    return [m if models.count(m) == 1 else f"{m} ({r.path.name})" for m, r in zip(models, runs)]


def samples_frame(runs: list[RunDirectory]):
    """One row per sample of every run: run, evalId, caseId, graded, passed,
    score, tokens, cost (the record's), costKnown."""
    import polars as pl

    columns: dict[str, list] = {
        k: []
        for k in ("run", "evalId", "caseId", "graded", "passed", "score", "inTok", "outTok", "totTok", "cost", "known")
    }
    for index, run in enumerate(runs):
        records = run.records
        for row in run.results:
            record = records.get((row["caseId"], row.get("repeat", 0))) or {}
            usage = record.get("usage") if type(record.get("usage")) is dict else {}
            cost = record.get("cost")
            outcome = row["outcome"]
            columns["run"].append(index)
            columns["evalId"].append(row["evalId"])
            columns["caseId"].append(row["caseId"])
            columns["graded"].append(outcome != "error")
            columns["passed"].append(outcome == "pass")
            columns["score"].append(row.get("score") if outcome != "error" else None)
            for name, key in (("inTok", "inputTokens"), ("outTok", "outputTokens"), ("totTok", "totalTokens")):
                value = usage.get(key)
                columns[name].append(value if type(value) is int else None)
            columns["cost"].append(float(cost) if type(cost) in (int, float) else None)
            columns["known"].append(type(cost) in (int, float))
    return pl.DataFrame(
        columns,
        schema={
            "run": pl.Int32,
            "evalId": pl.String,
            "caseId": pl.String,
            "graded": pl.Boolean,
            "passed": pl.Boolean,
            "score": pl.Float64,
            "inTok": pl.Int64,
            "outTok": pl.Int64,
            "totTok": pl.Int64,
            "cost": pl.Float64,
            "known": pl.Boolean,
        },
    )


def _moments(rows) -> Moments:
    m = Moments()
    for count, total, squares in rows:
        if count:
            m.add_case(count, total, squares)
    return m


def build_board(runs: list[RunDirectory]) -> dict:
    import polars as pl

    if len(runs) < 2:
        raise UsageError("a leaderboard needs at least two run directories")
    digests = {r.digest for r in runs}
    names = labels(runs)
    k = len(runs)
    frame = samples_frame(runs)
    # per run and case: the counts and sums its statistics need
    per_case = frame.group_by(["run", "evalId", "caseId"], maintain_order=True).agg(
        pl.col("graded").sum().alias("n"),
        pl.col("passed").sum().alias("p"),
        pl.col("score").count().alias("ns"),
        pl.col("score").sum().alias("s"),
        (pl.col("score") ** 2).sum().alias("ss"),
        pl.len().alias("samples"),
    )
    shared = per_case.group_by(["evalId", "caseId"]).agg(pl.col("run").n_unique().alias("runs"))
    shared = shared.filter(pl.col("runs") == k).select("evalId", "caseId")
    kept = per_case.join(shared, on=["evalId", "caseId"], how="semi")
    left_out = {
        row["run"]: row["len"]
        for row in per_case.join(shared, on=["evalId", "caseId"], how="anti")
        .group_by("run")
        .len()
        .iter_rows(named=True)
    }
    if kept.is_empty():
        raise UsageError("the runs share no case (by case ID and eval): there is nothing to rank")
    eval_order = list(dict.fromkeys(kept.filter(pl.col("run") == 0)["evalId"].to_list()))
    usage = (
        frame.join(shared, on=["evalId", "caseId"], how="semi")
        .group_by("run")
        .agg(
            pl.col("inTok").sum(),
            pl.col("outTok").sum(),
            pl.col("totTok").sum(),
            pl.col("cost").sum(),
            pl.col("known").all(),
            pl.len().alias("samples"),
        )
    )
    usage_of = {row["run"]: row for row in usage.iter_rows(named=True)}

    # case-level vectors per run, aligned on the shared cases (release order of the first run)
    kept = kept.sort(["run"], maintain_order=True)
    by_run = {
        index: {(r["evalId"], r["caseId"]): r for r in kept.filter(pl.col("run") == index).iter_rows(named=True)}
        for index in range(k)
    }
    case_keys = list(by_run[0])
    groups = {eval_id: [key for key in case_keys if key[0] == eval_id] for eval_id in eval_order}
    groups[OVERALL] = case_keys

    cells: dict[int, dict[str, dict]] = {i: {} for i in range(k)}
    for i in range(k):
        for group, keys in groups.items():
            rows = [by_run[i][key] for key in keys]
            passes = _moments((r["n"], float(r["p"]), float(r["p"])) for r in rows)
            scores = _moments((r["ns"], r["s"] or 0.0, r["ss"] or 0.0) for r in rows)
            pi, si = mean_interval(passes), mean_interval(scores)
            cells[i][group] = {
                "cases": len(keys),
                "samples": sum(r["samples"] for r in rows),
                "graded": sum(r["n"] for r in rows),
                "passRate": _rounded(passes.mean),
                "passRateCI": None if pi is None else [_rounded(pi.low), _rounded(pi.high)],
                "meanScore": _rounded(scores.mean),
                "meanScoreCI": None if si is None else [_rounded(si.low), _rounded(si.high)],
            }

    def rank_key(i: int) -> tuple:
        o = cells[i][OVERALL]
        return (-(o["meanScore"] if o["meanScore"] is not None else -1), -(o["passRate"] or 0.0), names[i])

    order = sorted(range(k), key=rank_key)
    best = order[0]
    versus: dict[int, dict[str, dict]] = {i: {} for i in order[1:]}
    for group, keys in groups.items():
        results = {}
        for i in order[1:]:
            a, b, ma, mb = [], [], Moments(), Moments()
            for key in keys:
                top, other = by_run[best][key], by_run[i][key]
                if top["ns"] and other["ns"]:
                    a.append(top["s"] / top["ns"])
                    b.append(other["s"] / other["ns"])
                    ma.add_case(top["ns"], top["s"], top["ss"])
                    mb.add_case(other["ns"], other["s"], other["ss"])
            results[i] = paired_difference(a, b, ma, mb)
        tested = [i for i in order[1:] if results[i] is not None]
        adjusted = dict(zip(tested, holm([results[i].p_value for i in tested])))  # type: ignore[union-attr]
        for i in order[1:]:
            r = results[i]
            if r is None:
                versus[i][group] = {"n": 0, "difference": None, "ci": None, "pValue": None, "verdict": None}
                continue
            below = adjusted[i] < ALPHA and r.difference < 0
            versus[i][group] = {
                "n": r.n,
                "difference": _rounded(r.difference),
                "ci": [_rounded(r.low), _rounded(r.high)],
                "pValue": _rounded(r.p_value),
                "holmP": _rounded(adjusted[i]),
                "verdict": "below" if below else "indistinguishable",
            }

    models = []
    for rank, i in enumerate(order, 1):
        u = usage_of.get(i) or {}
        run = runs[i]
        models.append(
            {
                "rank": rank,
                "model": names[i],
                "runDir": str(run.path),
                "release": run.digest,
                "verdict": "best" if i == best else versus[i][OVERALL]["verdict"],
                "overall": cells[i][OVERALL],
                "evals": {e: cells[i][e] for e in eval_order},
                "vsBest": None
                if i == best
                else {"overall": versus[i][OVERALL], **{e: versus[i][e] for e in eval_order}},
                "leftOut": left_out.get(i, 0),
                "tokens": {"input": u.get("inTok") or 0, "output": u.get("outTok") or 0, "total": u.get("totTok") or 0},
                "cost": _rounded(u.get("cost")) if u.get("known") else None,
            }
        )
    return {
        "method": {
            "cases": "shared by every run (case ID and eval)",
            "interval": "Wilson score interval on the clustered effective sample size",
            "ranking": "overall mean score, then pass rate",
            "versusBest": "paired difference over the cases both graded (Newcombe square-and-add), "
            "Holm-corrected over the comparisons of each column",
            "alpha": round(ALPHA, DIGITS),
        },
        "releaseChanged": len(digests) > 1,
        "sharedCases": len(case_keys),
        "evals": eval_order,
        "models": models,
    }
