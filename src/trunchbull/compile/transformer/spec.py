"""The `cases: { transformer, sources }` spec (SPEC §3.7): its keys, the
transformer module's path, and the limits of each run (deadline, memory),
which the environment may raise."""

from __future__ import annotations

from trunchbull.common.paths import MODULE_SUFFIXES, rel_posix, resolve_inside
from trunchbull.common.settings import positive_number
from trunchbull.common.userfiles import display, probe
from trunchbull.compile.cases.context import EvalContext
from trunchbull.compile.cases.fields import Where
from trunchbull.compile.transformer.runs import Limits

TRANSFORMER_KEYS = ("transformer", "sources")
DEFAULT_DEADLINE_S = 120.0
DEFAULT_MEMORY_MB = 4096
DEADLINE_ENV = "TRUNCHBULL_TRANSFORM_DEADLINE"  # seconds per run
MEMORY_ENV = "TRUNCHBULL_TRANSFORM_MEMORY_MB"  # V8 heap cap per run


def limits() -> Limits:
    """Per-run limits, from the environment or the defaults."""
    return Limits(
        float(positive_number(DEADLINE_ENV, DEFAULT_DEADLINE_S, float)),
        int(positive_number(MEMORY_ENV, DEFAULT_MEMORY_MB, int)),
    )


def check_spec(compiler: EvalContext, spec: dict, where: Where) -> tuple[bool, bool]:
    """(no unknown key, a usable shape: `transformer` a path and `sources` an object)."""
    ok = True
    for key in spec:
        if key not in TRANSFORMER_KEYS:
            compiler.problem(
                where.at(key),
                "transformer-unknown-key",
                f"unknown key {key!r}",
                "a transformer case source has exactly transformer and sources",
            )
            ok = False
    if not isinstance(spec.get("transformer"), str) or not isinstance(spec.get("sources"), dict):
        compiler.problem(
            where,
            "transformer-shape",
            "cases must be { transformer: \"./t.ts\", sources: { name: \"./file\" } }",
            "transformer is a module path and sources an object of named file paths",
        )
        return ok, False
    return ok, True


def transformer_module(compiler: EvalContext, text: str, where: Where) -> str | None:
    path, problem = resolve_inside(compiler.module_file.parent, text, compiler.root)
    if problem:
        compiler.problem(
            where,
            "transformer-path",
            f"transformer {problem}",
            "the transformer path is relative to the eval module and must stay inside the benchmark root",
        )
        return None
    assert path is not None
    if not path.name.endswith(MODULE_SUFFIXES):
        compiler.problem(
            where, "transformer-path", f"transformer {display(text)} is not a .ts, .mts, .js or .mjs module", None
        )
        return None
    _, unusable = probe(path)
    if unusable:
        compiler.file_problem(
            where,
            unusable,
            f"transformer module {display(text)} ",
            "transformer-missing",
            "transformer-path",
            "the transformer path is relative to the eval module",
        )
        return None
    return rel_posix(path, compiler.root)
