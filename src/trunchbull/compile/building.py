"""Compiling a benchmark root from the command line, for `build`, `check`
and `run ROOT`: the compile with its Node helper, diagnostics printed, the
release written in place of an earlier one (never of other files)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from trunchbull.common import exit_codes
from trunchbull.common.diagnostics import Diagnostic, UsageError, render_json, render_text
from trunchbull.common.userfiles import UNREADABLE_CODE, display, os_problem

if TYPE_CHECKING:  # imported when a compile starts, not by every command
    from trunchbull.compile.pipeline import CompileOutcome


def _print_diagnostics(diagnostics: list[Diagnostic], root_prefix: str, as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(render_json(diagnostics) + b"\n")
    elif diagnostics:
        print(render_text(diagnostics, root_prefix), file=sys.stderr)


def root_prefix(root_arg: Path) -> str:
    """What diagnostics' root-relative paths are shown under: the root as given on the command
    line (`benchmarks/c/`), so that they open from where the command ran."""
    shown = root_arg if root_arg.is_dir() else root_arg.parent
    text = shown.as_posix()
    return "" if text in (".", "") else text.rstrip("/") + "/"


# The last compile's outcome stays referenced: a command-line run then exits
# without freeing it (see __main__.py).
_kept_until_exit: list = []


def compile_root(root: Path, as_json: bool, *, types: bool = False) -> tuple[int, CompileOutcome]:
    """Compile a benchmark root; (exit code, outcome), diagnostics printed.
    `types`: also type-check its TypeScript modules (typecheck.py)."""
    from trunchbull.compile.typescript_compiler import typescript
    from trunchbull.node.sandbox import NodeHelper
    from trunchbull.node.toolchain import take_early_helper, toolchain

    status = None
    gc.disable()  # a compile builds many long-lived objects and few cycles: collection would only rescan them
    try:
        # Node starts up while the compiler's modules import (or since __main__ started it).
        with NodeHelper(toolchain(), started=take_early_helper()) as helper:
            # TypeScript is installed on first use, before the compile: when it cannot be, the
            # command stops at once, saying so, rather than after a compile it cannot finish
            ts = typescript(toolchain()) if types else None
            from trunchbull.common.progress import Status
            from trunchbull.compile.pipeline import compile_benchmark

            status = Status(enabled=None if not as_json else False)
            outcome = compile_benchmark(root, progress=status, helper=helper)
            if ts is not None:
                from trunchbull.compile.typecheck import check_types

                status("checking types")
                found = check_types(
                    outcome.root, outcome.modules, outcome.diagnostics.errors, toolchain(), ts, outcome.install_dir
                )
                outcome.diagnostics.extend(found)
    finally:
        gc.freeze()  # what the compile built lives to the end: later collections need not rescan it
        gc.enable()
        if status:
            status.done()
    _kept_until_exit[:] = [outcome]
    diagnostics = outcome.diagnostics.sorted()
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        _print_diagnostics(diagnostics, root_prefix(root), as_json)
        if not as_json:
            print(f"trunchbull: {len(errors)} error{'s' * (len(errors) != 1)}; nothing was written", file=sys.stderr)
        # a file that could not be read is the environment's problem, not the benchmark's (SPEC §3.9)
        return (exit_codes.USAGE if any(d.code == UNREADABLE_CODE for d in errors) else exit_codes.FAILED), outcome
    if not as_json:
        _print_diagnostics(diagnostics, root_prefix(root), False)
    return exit_codes.OK, outcome


def refuse_to_replace(out: Path) -> None:
    """A build replaces an earlier release, never another directory's files."""
    try:
        if out.is_dir() and any(out.iterdir()) and not (out / "release.json").is_file():
            raise UsageError(f"{out} exists and is not a release; choose an empty or new output directory")
        if out.exists() and not out.is_dir():
            raise UsageError(f"{out} exists and is not a directory")
    except (OSError, ValueError) as err:
        raise UsageError(f"the output path {display(str(out))} {os_problem(err)}") from None


def build_release(
    root: Path, out: Path | None, *, as_json: bool, tar: bool = False
) -> tuple[int, CompileOutcome, Path | None]:
    """Compile `root` and write its release to `out` (default ROOT/dist/release);
    (exit code, outcome, the release directory). Nothing is written on errors."""
    if out:
        refuse_to_replace(out)
    code, outcome = compile_root(root, as_json)
    if code != exit_codes.OK:
        return code, outcome, None
    out = out or outcome.root / "dist" / "release"
    refuse_to_replace(out)
    release = outcome.release
    assert release is not None  # a compile without errors has a release
    try:
        release.write(out)
        if tar:
            release.write_tar(out.with_name(out.name + ".tar"))
    except (OSError, ValueError) as err:
        raise UsageError(
            f"cannot write the release to {display(str(out))}: {getattr(err, 'strerror', None) or err}"
        ) from None
    return exit_codes.OK, outcome, out
