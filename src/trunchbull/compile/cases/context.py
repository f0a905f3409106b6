"""What a case reader needs from the eval being compiled: where the module
is, how to report a problem, and the compile's shared resources. The eval
compiler (evals.EvalCompiler) provides it; the case readers depend only on
this protocol, never on evals.py, so the dependency runs one way."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from trunchbull.common.diagnostics import Diagnostics
from trunchbull.compile.cases.fields import Where

if TYPE_CHECKING:
    from trunchbull.common.userfiles import FileProblem
    from trunchbull.compile.modules import ModuleReport
    from trunchbull.node.sandbox import NodeHelper


class EvalContext(Protocol):
    report: "ModuleReport"  # the inspected eval module
    root: Path  # the benchmark root
    module_file: Path  # the eval module's file
    diags: Diagnostics
    install_dir: Path | None  # installed dependencies, for package imports
    transform_runs: list[dict] | None  # a transformer's two run records, when made by separate processes
    helper: "NodeHelper | None"  # a running esbuild helper, if any

    def problem(self, where: Where, code: str, message: str, hint: str | None = None) -> None: ...

    def file_problem(
        self, where: Where, problem: "FileProblem", what: str, missing_code: str, code: str, hint: str | None
    ) -> None: ...

    def hold_problems(self) -> None: ...

    def take_held(self) -> list[tuple]: ...
