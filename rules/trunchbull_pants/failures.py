"""Failures that are the user's to fix, reported as Pants' own linters and checkers report theirs:
the compiler's diagnostics and a one-line summary, a non-zero exit, no engine traceback.

`pants check` returns its exit code from `CheckResults`. `pants package` has no such channel: in
Pants 2.17 its goal returns 0 unless a rule raises, and Pants renders any exception a rule
raises as `1 Exception encountered: Engine traceback: in 'package' goal ... ClassName: message`.
`install()` renders the exceptions of this module's type as their message alone (the engine
traceback and the Python one are still printed with `--print-stacktrace`); any other failure is
rendered as Pants renders it.
"""

from __future__ import annotations

import logging
import re

logger = logging.getLogger(__name__)

_ERROR_LINE = re.compile(r"^\S.*?: error\[[\w-]+\]: ", re.M)


class ReportedFailure(Exception):
    """A failure whose message says all the user needs (diagnostics, what to do)."""


class TrunchbullCompileError(ReportedFailure):
    """The benchmark has errors: nothing was written."""


def count_errors(diagnostics: str) -> int:
    """The number of `path:line:col: error[code]: message` lines in the compiler's diagnostics."""
    return len(_ERROR_LINE.findall(diagnostics))


def compile_failure(address: object, diagnostics: str) -> TrunchbullCompileError:
    """The one-line summary of a failed compile, followed by the compiler's diagnostics, which are
    exactly the lines `trunchbull build` prints from the repository root."""
    n = count_errors(diagnostics)
    summary = f"trunchbull: {address}: {n} error{'s' * (n != 1)}; nothing was written"
    return TrunchbullCompileError(f"{summary}\n{diagnostics.rstrip()}")


_installed = False


def install() -> None:
    """Render `ReportedFailure`s without Pants' traceback (idempotent; a no-op when the Pants
    internals it relies on are not there)."""
    global _installed
    if _installed:
        return
    try:
        from pants.engine.internals.scheduler import ExecutionError, SchedulerSession
    except ImportError:  # another Pants: its rendering stays
        return
    original = getattr(SchedulerSession, "_raise_on_error", None)
    if original is None:
        return

    def _raise_on_error(self, throws):
        reported = [t.exc for t in throws if isinstance(t.exc, ReportedFailure)]
        with_trace = getattr(getattr(self, "_scheduler", None), "include_trace_on_error", True)
        if reported and len(reported) == len(throws) and not with_trace:
            raise ExecutionError("\n\n".join(str(e) for e in reported), wrapped_exceptions=tuple(reported))
        return original(self, throws)

    SchedulerSession._raise_on_error = _raise_on_error  # type: ignore[method-assign]
    _installed = True
