"""`trunchbull check --types`: the benchmark's TypeScript modules type-checked
by the pinned TypeScript compiler against the generated declarations
(authoring_types.py), its errors reported as diagnostics like every other.

The compiler is pinned apart from the core toolchain and installed on first
use (typescript_compiler.py). The check reads the modules the compile read (the config, the eval and tool
modules, the transformers they name, and what those import) with the
compiler options `init` writes into tsconfig.json (TSCONFIG below), the
benchmark's installed dependencies and Node's types; a benchmark's own
tsconfig.json is not read. It runs after the compile, and says nothing twice:
no type error is shown for a module that does not bundle or import (its one
error is the cause), on a line that already has a compile error, nor — in a
module with compile errors — the whole-export "does not satisfy" error that
repeats them."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import orjson

from trunchbull.common import lifetime
from trunchbull.common.diagnostics import Diagnostic, UsageError
from trunchbull.common.paths import rel_posix
from trunchbull.common.userfiles import NOT_REGULAR_CODE, UNREADABLE_CODE
from trunchbull.compile.authoring_types import FILE_NAME, declarations
from trunchbull.compile.typescript_compiler import TypeScript
from trunchbull.node.toolchain import Toolchain

CODE = "type-error"
DEADLINE_S = 300.0
MAX_SHOWN = 200  # type errors shown; the rest are counted
MAX_TEXT = 400  # characters of one message

# The compiler options of `check --types`, and of the tsconfig.json `init` writes (without
# the paths that only the check knows): strict, no output, modules resolved as esbuild does.
TSCONFIG = {
    "strict": True,
    "noEmit": True,
    "target": "es2022",
    "lib": ["es2024"],
    "module": "preserve",
    "moduleResolution": "bundler",
    "allowImportingTsExtensions": True,
    "resolveJsonModule": True,
    "isolatedModules": True,
    "allowJs": True,
    "skipLibCheck": True,
}
# Compile errors that mean the module was never read as a whole: its type errors are not shown.
UNREAD = frozenset({"bundle", "module-import", NOT_REGULAR_CODE, UNREADABLE_CODE})
# tsc's "does not satisfy the expected type" error, made at `satisfies` for the whole export.
DOES_NOT_SATISFY = 1360

_LOCATED = re.compile(r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): error TS(?P<code>\d+): (?P<message>.*)$")
_GLOBAL = re.compile(r"^error TS(?P<code>\d+): (?P<message>.*)$")


@dataclass(frozen=True)
class TscError:
    file: str | None  # root-relative POSIX path
    line: int | None
    col: int | None
    code: int
    message: str
    detail: str | None  # the deepest line of tsc's explanation


def check_types(
    root: Path,
    modules: list[str],
    compile_errors: list[Diagnostic],
    tc: Toolchain,
    ts: TypeScript,
    install_dir: Path | None = None,
) -> list[Diagnostic]:
    """Type-check `modules` (root-relative) and return the type errors to show."""
    sources = [m for m in modules if _is_source(m) and (root / m).is_file()]
    if not sources:
        return []
    with lifetime.scratch_dir("trunchbull-types-") as scratch:
        (scratch / FILE_NAME).write_text(declarations())
        options = {
            **TSCONFIG,
            "types": ["node"],
            "typeRoots": [str(ts.type_roots)],
        }
        if install_dir is not None:  # the benchmark's packages, where the compile installed them
            options["paths"] = {"*": [str(install_dir / "node_modules" / "*")]}
        config = {
            "compilerOptions": options,
            "files": [str(scratch / FILE_NAME), *(str(root / m) for m in sources)],
        }
        (scratch / "tsconfig.json").write_bytes(orjson.dumps(config))
        output = _run_tsc(tc, ts, scratch / "tsconfig.json", root)
    found = parse_output(output, root, scratch)
    return _shown(found, compile_errors)


def _is_source(path: str) -> bool:
    return path.endswith((".ts", ".mts", ".cts", ".js", ".mjs")) and not path.endswith((".d.ts", ".d.mts"))


def _run_tsc(tc: Toolchain, ts: TypeScript, config: Path, cwd: Path) -> str:
    if not ts.tsc.is_file():
        raise UsageError(f"the TypeScript install in {ts.root} has no compiler; delete that directory and run again")
    proc = lifetime.spawn(
        [str(tc.node), str(ts.tsc), "-p", str(config), "--pretty", "false"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=tc.base_env(),
    )
    try:
        stdout, stderr = proc.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        lifetime.stop(proc)
        proc.wait()
        raise UsageError(f"the type check did not finish within {DEADLINE_S:g} s") from None
    except BaseException:
        lifetime.stop(proc)
        proc.wait()
        raise
    # exit 0: no errors; 1 and 2: errors were reported (with or without output files)
    if proc.returncode not in (0, 1, 2) or (proc.returncode and not stdout.strip()):
        last = stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise UsageError(f"the TypeScript compiler failed (exit {proc.returncode}): {last[0][:300]}")
    return stdout.decode(errors="replace")


def parse_output(text: str, root: Path, scratch: Path) -> list[TscError]:
    """tsc's `--pretty false` output: one `file(line,col): error TSn: message` line per
    error, its explanation on the indented lines that follow."""
    found: list[TscError] = []
    head: dict | None = None
    details: list[str] = []

    def close() -> None:
        if head is not None:
            found.append(_error(head, details, root, scratch))

    for line in text.splitlines():
        if line.startswith(" ") and head is not None:
            details.append(line.strip())
            continue
        match = _LOCATED.match(line) or _GLOBAL.match(line)
        if match:
            close()
            head, details = match.groupdict(), []
    close()
    return found


def _error(head: dict, details: list[str], root: Path, scratch: Path) -> TscError:
    file = head.get("file")
    if file is not None:
        path = (root / file).resolve()
        file = FILE_NAME if path.parent == scratch.resolve() else rel_posix(path, root.resolve())
    detail = details[-1] if details else None
    return TscError(
        file,
        int(head["line"]) if head.get("line") else None,
        int(head["col"]) if head.get("col") else None,
        int(head["code"]),
        _clip(head["message"]),
        _clip(detail) if detail else None,
    )


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _shown(found: list[TscError], compile_errors: list[Diagnostic]) -> list[Diagnostic]:
    unread = {d.file for d in compile_errors if d.code in UNREAD}
    lines = {(d.file, d.line) for d in compile_errors if d.line}
    with_errors = {d.file for d in compile_errors}
    kept = [
        e
        for e in found
        if e.file not in unread
        and (e.file, e.line) not in lines
        and not (e.code == DOES_NOT_SATISFY and e.file in with_errors)
    ]
    shown = [
        Diagnostic(
            CODE,
            f"TS{e.code}: {e.message}" + (f" ({e.detail})" if e.detail else ""),
            file=e.file,
            line=e.line,
            col=e.col,
        )
        for e in kept[:MAX_SHOWN]
    ]
    if len(kept) > MAX_SHOWN:
        shown.append(
            Diagnostic(CODE, f"{len(kept) - MAX_SHOWN} more type errors are not shown", hint="fix the ones above first")
        )
    return shown
