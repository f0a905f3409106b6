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
from trunchbull.stats.paired import PairSums, paired_from_sums
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
            found = record.get("usage")
            usage: dict = found if isinstance(found, dict) else {}
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
            known = isinstance(cost, (int, float)) and not isinstance(cost, bool)
            columns["cost"].append(float(cost) if known else None)  # type: ignore[arg-type]
            columns["known"].append(known)
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


def _moment_exprs(count: str, total: str, squares: str, prefix: str) -> list:
    """polars aggregations of Moments.add_case over the cases with count > 0."""
    import polars as pl

    has = pl.col(count) > 0
    x = pl.when(has).then(pl.col(total) / pl.col(count))
    return [
        has.sum().alias(f"{prefix}cases"),
        x.sum().alias(f"{prefix}sum_x"),
        (x * x).sum().alias(f"{prefix}sum_xx"),
        (has & (pl.col(total) > 0)).sum().alias(f"{prefix}above_zero"),
        (has & (pl.col(total) < pl.col(count))).sum().alias(f"{prefix}below_one"),
        pl.col(count).sum().alias(f"{prefix}samples"),
        pl.col(total).sum().alias(f"{prefix}sum_y"),
        pl.col(squares).sum().alias(f"{prefix}sum_yy"),
    ]


def _moments_of(row: dict, prefix: str) -> Moments:
    return Moments(
        int(row[f"{prefix}cases"]),
        float(row[f"{prefix}sum_x"] or 0.0),
        float(row[f"{prefix}sum_xx"] or 0.0),
        int(row[f"{prefix}above_zero"]),
        int(row[f"{prefix}below_one"]),
        int(row[f"{prefix}samples"]),
        float(row[f"{prefix}sum_y"] or 0.0),
        float(row[f"{prefix}sum_yy"] or 0.0),
    )


def _interval(m: Moments) -> list | None:
    interval = mean_interval(m)
    return None if interval is None else [_rounded(interval.low), _rounded(interval.high)]


def _by_group(frame, exprs: list, keys: list[str]) -> dict:
    """(*keys, group) → aggregated row: per eval, and overall."""
    out = {}
    for row in frame.group_by([*keys, "evalId"]).agg(exprs).iter_rows(named=True):
        out[(*(row[k] for k in keys), row["evalId"])] = row
    overall = frame.group_by(keys).agg(exprs) if keys else frame.select(exprs)
    for row in overall.iter_rows(named=True):
        out[(*(row[k] for k in keys), OVERALL)] = row
    return out


def build_board(runs: list[RunDirectory]) -> dict:
    import polars as pl

    if len(runs) < 2:
        raise UsageError("a leaderboard needs at least two run directories")
    digests = {r.digest for r in runs}
    names = labels(runs)
    k = len(runs)
    frame = samples_frame(runs)
    score2 = pl.when(pl.col("graded")).then(pl.col("score") ** 2)
    # per run and case: the counts and sums its statistics need
    per_case = frame.group_by(["run", "evalId", "caseId"], maintain_order=True).agg(
        pl.col("graded").sum().cast(pl.Float64).alias("n"),
        pl.col("passed").sum().cast(pl.Float64).alias("p"),
        pl.col("score").count().cast(pl.Float64).alias("ns"),
        pl.col("score").sum().alias("s"),
        score2.sum().alias("ss"),
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
    shared_count = kept.filter(pl.col("run") == 0).height
    usage_of = {
        row["run"]: row
        for row in frame.join(shared, on=["evalId", "caseId"], how="semi")
        .group_by("run")
        .agg(
            pl.col("inTok").sum(),
            pl.col("outTok").sum(),
            pl.col("totTok").sum(),
            pl.col("cost").sum(),
            pl.col("known").all(),
        )
        .iter_rows(named=True)
    }

    cell_rows = _by_group(
        kept,
        [
            pl.len().alias("cases"),
            pl.col("samples").sum().alias("samples_all"),
            pl.col("n").sum().alias("graded"),
            *_moment_exprs("n", "p", "p", "p_"),
            *_moment_exprs("ns", "s", "ss", "s_"),
        ],
        ["run"],
    )
    groups = [*eval_order, OVERALL]
    cells: dict[int, dict[str, dict]] = {i: {} for i in range(k)}
    for i in range(k):
        for group in groups:
            row = cell_rows[(i, group)]
            passes, scores = _moments_of(row, "p_"), _moments_of(row, "s_")
            cells[i][group] = {
                "cases": int(row["cases"]),
                "samples": int(row["samples_all"]),
                "graded": int(row["graded"]),
                "passRate": _rounded(passes.mean),
                "passRateCI": _interval(passes),
                "meanScore": _rounded(scores.mean),
                "meanScoreCI": _interval(scores),
            }

    def rank_key(i: int) -> tuple:
        o = cells[i][OVERALL]
        return (-(o["meanScore"] if o["meanScore"] is not None else -1), -(o["passRate"] or 0.0), names[i])

    order = sorted(range(k), key=rank_key)
    best = order[0]
    # each other run against the best, paired over the cases both scored
    top = kept.filter(pl.col("run") == best).select(
        "evalId", "caseId", pl.col("ns").alias("a_ns"), pl.col("s").alias("a_s"), pl.col("ss").alias("a_ss")
    )
    pairs = kept.filter(pl.col("run") != best).join(top, on=["evalId", "caseId"])
    pairs = pairs.filter((pl.col("ns") > 0) & (pl.col("a_ns") > 0)).with_columns(
        (pl.col("a_s") / pl.col("a_ns")).alias("xa"), (pl.col("s") / pl.col("ns")).alias("xb")
    )
    pair_rows = _by_group(
        pairs,
        [
            pl.len().alias("pairs"),
            pl.col("xa").sum().alias("sum_a"),
            pl.col("xb").sum().alias("sum_b"),
            (pl.col("xa") ** 2).sum().alias("sum_aa"),
            (pl.col("xb") ** 2).sum().alias("sum_bb"),
            (pl.col("xa") * pl.col("xb")).sum().alias("sum_ab"),
            *_moment_exprs("a_ns", "a_s", "a_ss", "a_"),
            *_moment_exprs("ns", "s", "ss", "b_"),
        ],
        ["run"],
    )
    versus: dict[int, dict[str, dict]] = {i: {} for i in order[1:]}
    for group in groups:
        results = {}
        for i in order[1:]:
            row = pair_rows.get((i, group))
            results[i] = (
                None
                if row is None
                else paired_from_sums(
                    PairSums(
                        int(row["pairs"]), row["sum_a"], row["sum_b"], row["sum_aa"], row["sum_bb"], row["sum_ab"]
                    ),
                    _moments_of(row, "a_"),
                    _moments_of(row, "b_"),
                )
            )
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
        "sharedCases": shared_count,
        "evals": eval_order,
        "models": models,
    }
