"""Bundling (esbuild, trusted helper) and inspection (sandboxed Node) of
eval and tool modules (SPEC §3.3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import orjson

from trunchbull.common import lifetime
from trunchbull.common.diagnostics import Diagnostic
from trunchbull.common.paths import rel_posix
from trunchbull.common.settings import positive_number
from trunchbull.common.userfiles import NOT_REGULAR_CODE, printable
from trunchbull.node.protocol import INSPECTION, ProtocolError
from trunchbull.node.replies import inspection_ok
from trunchbull.node.sandbox import NodeHelper, stream_sandboxed
from trunchbull.node.toolchain import JS_DIR, Toolchain

INSPECT_DEADLINE_S = 60.0  # importing one module; the environment may change it:
INSPECT_DEADLINE_ENV = "TRUNCHBULL_INSPECT_DEADLINE"
BUNDLE_DEADLINE_S = 120.0  # esbuild takes well under a second; longer, it is blocked on something


def bundle_timeout_diagnostic(path: str) -> Diagnostic:
    return Diagnostic(
        "bundle",
        f"bundling did not finish within {BUNDLE_DEADLINE_S:g} s",
        file=path,
        hint="esbuild may be blocked reading a file that is not a regular file (a named pipe or a "
        "device) that the module imports or that lies beside it",
    )


@dataclass
class ModuleReport:
    path: str  # root-relative module path
    kind: str  # "eval" | "tool"
    bundle_sha: str | None = None
    bundle_file: Path | None = None
    inputs: list[str] = field(default_factory=list)  # root-relative files in the bundle
    inspection: dict | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.inspection is not None and self.inspection.get("ok", False)

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "kind": self.kind,
            "bundleSha": self.bundle_sha,
            "bundleFile": str(self.bundle_file) if self.bundle_file else None,
            "inputs": self.inputs,
            "inspection": self.inspection,
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }

    @classmethod
    def from_json(cls, data: dict, base: Path) -> "ModuleReport":
        """`base`: the directory a relative bundleFile is relative to."""
        bundle = data.get("bundleFile")
        return cls(
            data["path"],
            data["kind"],
            data.get("bundleSha"),
            base / bundle if bundle else None,
            data.get("inputs", []),
            data.get("inspection"),
            [Diagnostic.from_json(d) for d in data.get("diagnostics", [])],
        )


def bundle_modules(
    helper: NodeHelper, root: Path, entries: list[tuple[str, str]], out_dir: Path, repo_root: Path
) -> list[ModuleReport]:
    """Bundle each (path, kind) entry; bundles land in out_dir as <sha>.mjs.
    Local imports must stay inside the repository root (SPEC §3.1)."""
    response = helper.request(
        {"op": "bundle", "entries": [p for p, _ in entries], "absWorkingDir": str(root), "outDir": str(out_dir)},
        timeout=BUNDLE_DEADLINE_S,
    )
    reports = []
    for (path, kind), result in zip(entries, response["results"]):
        report = ModuleReport(path, kind)
        if result["ok"]:
            report.bundle_sha = result["sha256"]
            report.bundle_file = Path(result["bundleFile"])
            report.inputs = [rel_posix(root / p, root) for p in result["inputs"]]
            report.diagnostics.extend(_imports_outside(root, repo_root, path, result))
            if report.diagnostics:
                report.bundle_sha = report.bundle_file = None
        else:
            for err in result["errors"]:
                report.diagnostics.append(_bundle_error(root, path, err))
        reports.append(report)
    return reports


_KINDS = {
    "fifo": "a named pipe (FIFO)",
    "socket": "a socket",
    "character-device": "a character device",
    "block-device": "a block device",
    "directory": "a directory",
}


def _bundle_error(root: Path, entry: str, err: dict) -> Diagnostic:
    """One esbuild error of bundling `entry` as a diagnostic."""
    special = err.get("notRegular")
    if isinstance(special, dict) and isinstance(special.get("path"), str):
        what = _KINDS.get(str(special.get("kind")), "not a regular file")
        name = Path(special["path"]).name
        role = (
            "a file esbuild reads beside the modules"
            if name in ("package.json", "tsconfig.json", "jsconfig.json")
            else f"a module that {entry} imports"
            if rel_posix(Path(special["path"]), root) != entry
            else "the module"
        )
        return Diagnostic(
            NOT_REGULAR_CODE,
            f"{role} is {what}, not a regular file",
            file=printable(rel_posix(Path(special["path"]), root)),
            hint="modules and the package.json / tsconfig.json beside them are read from regular files only",
        )
    return Diagnostic(
        "bundle",
        err["message"],
        file=err.get("file") or entry,
        line=err.get("line"),
        col=err.get("col"),
        hint=err.get("hint") or "fix the module so esbuild can bundle it",
    )


def _imports_outside(root: Path, repo_root: Path, entry: str, result: dict) -> list[Diagnostic]:
    """A diagnostic per local import that resolves outside the repository root."""
    from trunchbull.common.paths import is_within
    from trunchbull.compile.locate import find_literal

    boundary = repo_root.resolve()
    found = []
    for importer, imports in sorted((result.get("imports") or {}).items()):
        for imp in imports:
            target = (root / imp["path"]).resolve()
            if is_within(target, boundary):
                continue
            importer_file = (root / importer).resolve()
            inside_root = is_within(importer_file, root.resolve())
            file = rel_posix(importer_file, root.resolve()) if inside_root else entry
            line, col = find_literal(importer_file, imp["original"]) if inside_root else (None, None)
            found.append(
                Diagnostic(
                    "import-outside-repo",
                    f"the local import {imp['original']!r} resolves outside the repository root",
                    file=file,
                    line=line,
                    col=col,
                    hint="local imports may reach files inside the repository root (the nearest directory with .git or "
                    "pants.toml); move the shared code inside it",
                )
            )
    return found


def inspect_modules(
    reports: list[ModuleReport],
    *,
    tc: Toolchain,
    read_paths: list[Path],
    deadline_s: float | None = None,
    on_inspected: Callable[[ModuleReport], None] | None = None,
) -> None:
    """Import every bundled module in a sandboxed Node process and attach what
    it exports; `on_inspected` gets each report as soon as Node reports it (the
    caller expands evals while Node inspects the rest). A module that hangs or
    kills the process is reported alone; the rest go to a fresh process.
    `deadline_s`: by default INSPECT_DEADLINE_S, or TRUNCHBULL_INSPECT_DEADLINE."""
    if deadline_s is None:
        deadline_s = float(positive_number(INSPECT_DEADLINE_ENV, INSPECT_DEADLINE_S, float))
    pending = [r for r in reports if r.bundle_file is not None]
    while pending:
        done = _inspect_batch(pending, tc=tc, read_paths=read_paths, deadline_s=deadline_s, on_inspected=on_inspected)
        pending = pending[done:]


def _inspect_batch(
    batch: list[ModuleReport],
    *,
    tc: Toolchain,
    read_paths: list[Path],
    deadline_s: float,
    on_inspected: Callable[[ModuleReport], None] | None,
) -> int:
    received = 0
    garbled = False  # a reply that is not an inspection: the channel cannot be trusted after it
    polluted = False

    def on_line(line: bytes) -> bool:
        nonlocal received, garbled
        nonlocal polluted
        if received >= len(batch):
            return True
        report = batch[received]
        try:
            tag, fields = INSPECTION.frame(line)
            if tag == b"polluted":  # the last module changed built-ins: the rest go to a fresh process
                polluted = True
                return True
            inspection = INSPECTION.json(fields[0], "an inspection")
        except ProtocolError:
            inspection = None
        if not inspection_ok(inspection, report.kind):
            garbled = True
            return True  # stop the process; the modules after this one go to a fresh one
        report.inspection = inspection
        received += 1
        if on_inspected:
            on_inspected(report)
        return received >= len(batch)

    with lifetime.scratch_dir("trunchbull-inspect-") as tmp:
        request = tmp / "request.json"
        request.write_bytes(
            orjson.dumps(
                {
                    "modules": [{"bundleFile": str(r.bundle_file), "kind": r.kind} for r in batch],
                    "aiFallback": str(tc.ai_package),
                }
            )
        )
        result = stream_sandboxed(
            JS_DIR / "compile/inspect.mjs",
            [str(request)],
            on_line,
            channel=INSPECTION,
            tc=tc,
            timeout=deadline_s,
            read_paths=[*read_paths, tmp, *{b.parent for r in batch if (b := r.bundle_file)}],
        )
    if received >= len(batch):
        return len(batch)
    if polluted:
        return received
    stuck = batch[received]
    output = result.stderr.text()
    if garbled or result.overlong:
        message = "the module's inspection could not be read: something other than the inspection was written to its reply channel"
        hint = "module top-level code must not write to file descriptor 1 directly (console output is fine)"
    elif result.timed_out:
        message = f"importing the module did not finish within {deadline_s:g} s (limit: {INSPECT_DEADLINE_ENV})"
        hint = f"module top-level code must not loop or wait forever; if it is just slow, raise the deadline with {INSPECT_DEADLINE_ENV}=SECONDS"
    elif "ERR_ACCESS_DENIED" in output:
        message = "importing the module tried an operation the sandbox forbids: " + _last_error_line(output)
        hint = "module code may not write files, start processes or read outside the benchmark"
    elif result.returncode == 13 or "unsettled top-level await" in output.lower():
        message = "the module's top-level await never settled"
        hint = "do not await a promise that never resolves at module level"
    else:
        message = f"importing the module crashed Node (exit {result.returncode}): {_last_error_line(output)}"
        hint = "see the error; module top-level code must run without side effects"
    message += result.stderr.described()
    stuck.diagnostics.append(Diagnostic("module-import", message, file=stuck.path, hint=hint))
    return received + 1


def _last_error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.startswith("Node.js v")]
    errors = [line for line in lines if "Error" in line]
    return (errors or lines or ["no output"])[-1][:500]
