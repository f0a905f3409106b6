"""Transformer-backed cases: `cases: { transformer, sources }` (SPEC §3.7)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trunchbull.cases.fields import CaseDraft, Where

if TYPE_CHECKING:
    from trunchbull.evals import CompiledEval, EvalCompiler

TRANSFORMER_KEYS = ("transformer", "sources")


def expand_transformer(compiler: "EvalCompiler", spec: dict, where: Where, result: "CompiledEval") -> list[CaseDraft] | None:
    for key in spec:
        if key not in TRANSFORMER_KEYS:
            compiler.problem(where.at(key), "transformer-unknown-key", f"unknown key {key!r}",
                             "a transformer case source has transformer and sources")
    if not isinstance(spec.get("transformer"), str) or not isinstance(spec.get("sources"), dict):
        compiler.problem(where, "transformer-shape", "cases must be { transformer: \"./t.ts\", sources: { name: \"./file\" } }")
        return None
    compiler.problem(where, "transformer-unsupported", "transformers are not supported by this compiler yet",
                     "use inline cases, CSV or JSONL for now")
    return None
