"""The expand stage (stage 4), per eval module: its inspected export
validated and its cases expanded (evals.py), with what the release-wide
stage needs to know of the module (its imports, the transformer it names)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trunchbull.common.diagnostics import Diagnostic, Diagnostics
from trunchbull.common.paths import rel_posix, resolve_inside
from trunchbull.compile.compiled_eval import CompiledEval
from trunchbull.compile.evals import EvalCompiler
from trunchbull.compile.modules import ModuleReport
from trunchbull.node.sandbox import NodeHelper


@dataclass
class Expansion:
    """The expand stage's result for one module listed as an eval."""

    path: str
    has_default: bool
    imports: list[str]  # root-relative files bundled into it
    transformer: str | None  # root-relative module its cases.transformer names
    eval: CompiledEval | None
    diagnostics: list[Diagnostic]

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "hasDefault": self.has_default,
            "imports": self.imports,
            "transformer": self.transformer,
            "eval": self.eval.to_json() if self.eval else None,
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }

    @classmethod
    def from_json(cls, data: dict) -> "Expansion":
        return cls(
            data["path"],
            data["hasDefault"],
            data["imports"],
            data["transformer"],
            CompiledEval.from_json(data["eval"]) if data["eval"] else None,
            [Diagnostic.from_json(d) for d in data["diagnostics"]],
        )


def expand_module(
    report: ModuleReport,
    root: Path,
    install_dir: Path | None = None,
    transform_runs: list[dict] | None = None,
    helper: NodeHelper | None = None,
) -> Expansion:
    """Stage 4, per eval module: validate its export and expand its cases.
    `transform_runs`: the two transformer runs' records, when separate
    processes made them (else expansion runs the transformer itself).
    `helper`: a running Node helper to bundle a transformer with."""
    diags = Diagnostics()
    inspection = report.inspection or {}
    has_default = "default" in inspection
    value = (inspection.get("default") or {}).get("value")
    cases = value.get("cases") if isinstance(value, dict) else None
    transformer = None
    if isinstance(cases, dict) and isinstance(cases.get("transformer"), str):
        path, _ = resolve_inside((root / report.path).parent, cases["transformer"], root)
        transformer = rel_posix(path, root) if path is not None else None
    compiled = None
    if report.ok and has_default:
        compiled = EvalCompiler(
            report, root, diags, install_dir, transform_runs=transform_runs, helper=helper
        ).compile()
    return Expansion(report.path, has_default, report.inputs, transformer, compiled, diags.items)
