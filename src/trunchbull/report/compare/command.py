"""`trunchbull compare RUN_A RUN_B` (SPEC §9): prints the comparison (or
its JSON, or Markdown), with --by FIELD per group too, and exits 1 with
--fail-on-regression when B is significantly worse overall, else 0;
unusable run directories are usage errors (2). With --judge SPEC, the
pairwise judging of pairwise_command.py instead."""

from __future__ import annotations

import sys
from typing import Callable

import orjson

from trunchbull.common import exit_codes
from trunchbull.common.diagnostics import UsageError
from trunchbull.common.gc_pause import gc_paused
from trunchbull.report.breakdown import group_of, parse_by, releases_for
from trunchbull.report.compare.comparison import compare_runs
from trunchbull.report.compare.paired import significantly_worse
from trunchbull.report.compare.pairwise_command import PairwiseJudging, pairwise_command
from trunchbull.report.compare.text import render_comparison
from trunchbull.report.markdown import comparison_markdown
from trunchbull.rundir.reader import read_run_dir


def compare_command(args, judging: Callable[[], PairwiseJudging] | None = None) -> int:
    """`judging`: makes the pairwise judge of --judge (given by the CLI: run/pairwise_judging.py)."""
    with gc_paused():
        pairwise = judging is not None
        unused = [flag for flag, (given, judged) in _FLAGS.items() if getattr(args, given, None) and judged != pairwise]
        if unused:
            raise UsageError(
                f"{', '.join(unused)}: "
                + ("not with pairwise judging (--judge)" if pairwise else "only with pairwise judging (--judge SPEC)")
            )
        if judging is None:
            return _compare_command(args)
        return pairwise_command(args, judging())


# flag → (its argument's name, whether it belongs to pairwise judging)
_FLAGS = {
    "--by": ("by", False),
    "--markdown": ("markdown", False),
    "--fail-on-regression": ("fail_on_regression", False),
    "-o": ("out", True),
    "--rubric": ("rubric", True),
    "--rerun-errors": ("rerun_errors", True),
    "--no-cache": ("no_cache", True),
    "--judge-base-url": ("judge_base_url", True),
    "--judge-api-key-env": ("judge_api_key_env", True),
    "--judge-max-tokens": ("judge_max_tokens", True),
    "--allow-self-judge": ("allow_self_judge", True),
}


def _compare_command(args) -> int:
    a, b = read_run_dir(args.run_a), read_run_dir(args.run_b)
    by = parse_by(args.by) if args.by else None
    groups = group_of(by, releases_for(by, [b, a], args.release)) if by else None
    comparison = compare_runs(a, b, args.allow_release_change, by.field if by else None, groups)
    worse = significantly_worse(comparison)
    code = exit_codes.FAILED if args.fail_on_regression and worse else exit_codes.OK
    if args.json:
        out = {**comparison, "significantlyWorse": worse, "exitCode": code}
        sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
    elif args.markdown:
        print(comparison_markdown(comparison), end="")
    else:
        print(render_comparison(comparison, comparison["a"], comparison["b"]))
    if code == exit_codes.FAILED:
        ci = comparison["overall"]["ci"]
        print(
            f"trunchbull: --fail-on-regression: B is significantly worse than A (difference "
            f"{comparison['overall']['difference']:+.4g}, 95% CI [{ci[0]:+.4g}, {ci[1]:+.4g}])",
            file=sys.stderr,
        )
    return code
