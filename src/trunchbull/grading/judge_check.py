"""Model-graded kinds need a judge (evaluators/judging.py): `grade` and
`run` work out, before anything is called or written, which judge each
judged case gets (the command's `--judge`, else the judge its spec pins), and
refuse the evals whose judged cases have neither."""

from __future__ import annotations

from typing import Iterable

from trunchbull.common.diagnostics import UsageError
from trunchbull.evaluators.inputs import MODEL
from trunchbull.evaluators.judging import PINNED_JUDGE
from trunchbull.evaluators.registry import evaluators


def judges_needed(
    cases: Iterable[dict], given: tuple[str, ...] = (), evals: Iterable[dict] | None = None, *, by_eval: bool = False
) -> dict[str, list[str]]:
    """Judge SPEC → the evals it judges, for the judged cases among `cases`
    (`given`: the command's --judge SPECs, which judge every one; `evals`:
    the release's eval entries, whose `evaluatorKinds` spare looking at the
    cases of a release with no judged kind). A UsageError names the evals
    with a judged case that has no judge (`by_eval`: and, for `run`, the
    --eval options that leave them out)."""
    known = evaluators()
    if evals is not None and not any(
        kind in known and MODEL in known[kind].reads for ev in evals for kind in ev.get("evaluatorKinds") or ()
    ):
        return {}
    judged_kinds: dict[str, bool] = {}
    needed: dict[str, list[str]] = {}
    missing: dict[str, str] = {}  # eval ID → kind
    eval_ids: dict[str, None] = {}  # every eval of `cases`, in order
    for case in cases:
        eval_ids.setdefault(case["evalId"])
        spec = case["evaluate"]
        kind = spec.get("kind")
        judged = judged_kinds.get(kind)
        if judged is None:
            judged = judged_kinds[kind] = kind in known and MODEL in known[kind].reads
        if not judged:
            continue
        chosen = given or ((spec[PINNED_JUDGE],) if isinstance(spec.get(PINNED_JUDGE), str) else ())
        if not chosen:
            missing.setdefault(case["evalId"], kind)
        for text in chosen:
            judged_evals = needed.setdefault(text, [])
            if case["evalId"] not in judged_evals:
                judged_evals.append(case["evalId"])
    if missing:
        shown = [f"{eval_id} ({kind})" for eval_id, kind in missing.items()]
        others = [eval_id for eval_id in eval_ids if eval_id not in missing]
        leave_out = (
            f", or run only the others ({' '.join(f'--eval {e}' for e in others[:5])})" if by_eval and others else ""
        )
        raise UsageError(
            f"{len(shown)} eval(s) grade with a judge model, and no judge is available to this command: "
            f"{', '.join(shown[:10])}{' …' if len(shown) > 10 else ''}. Name one with --judge SPEC (e.g. --judge "
            f'openai:gpt-4o-mini), or pin one in the spec (judge: "…"){leave_out}'
        )
    return needed
