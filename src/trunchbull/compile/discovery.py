"""Entrypoints (SPEC §3.1): the config's explicit lists, or modules
discovered under evals/ and tools/."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from trunchbull.common.diagnostics import Diagnostics
from trunchbull.common.paths import MODULE_SUFFIXES, rel_posix
from trunchbull.common.userfiles import NOT_REGULAR_CODE, UNREADABLE_CODE, kind_name, os_problem, printable, real_path
from trunchbull.compile.config import BenchmarkConfig

DECLARATION_SUFFIXES = (".d.ts", ".d.mts")


def is_discoverable(name: str) -> bool:
    return (
        name.endswith(MODULE_SUFFIXES)
        and not name.endswith(DECLARATION_SUFFIXES)
        and ".test." not in name
        and ".spec." not in name
        and not name.startswith(".")
    )


def discover(root: Path, directory: str, diags: Diagnostics | None = None) -> list[str]:
    """Root-relative module paths under root/directory, bytewise sorted.
    Discoverable names that are not regular files (a named pipe, a socket,
    a device, a symlink loop), whose names are not UTF-8, or directories that
    cannot be read are reported to `diags` and left out."""
    diags = diags if diags is not None else Diagnostics()
    base = root / directory
    if not base.is_dir():
        return []

    def unreadable(err: OSError) -> None:
        where = rel_posix(Path(err.filename), root) if err.filename else directory
        diags.error(
            UNREADABLE_CODE,
            f"the directory {os_problem(err)}",
            file=printable(where),
            hint="discovery reads every directory under evals/ and tools/; check their permissions",
        )

    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base, onerror=unreadable, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "node_modules"]
        for name in filenames:
            if not is_discoverable(name):
                continue
            rel = rel_posix(Path(dirpath) / name, root)
            problem = _entry_problem(Path(dirpath) / name, rel)
            if problem:
                code, message, hint = problem
                diags.error(code, message, file=printable(rel), hint=hint)
            else:
                found.append(rel)
    return sorted(found, key=lambda p: p.encode())


def _entry_problem(path: Path, rel: str) -> tuple[str, str, str] | None:
    """Why a discovered module cannot be compiled, if it cannot: (code, message, hint)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return (
            "path-encoding",
            "the file name is not valid UTF-8",
            "rename the file: module paths are recorded in the release as UTF-8 text",
        )
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None  # a dangling symlink: bundling reports it like any unresolvable module
    except (OSError, ValueError) as err:
        problem = os_problem(err)
        code = UNREADABLE_CODE if problem.kind == "unreadable" else NOT_REGULAR_CODE
        return code, f"the discovered module {problem}", "remove it from evals/ or tools/, or fix it"
    if not stat.S_ISREG(mode):
        return (
            NOT_REGULAR_CODE,
            f"the discovered module is {kind_name(mode)}, not a regular file",
            "modules are read from regular files only; remove it from evals/ or tools/",
        )
    return None


@dataclass
class Entrypoints:
    evals: list[str]
    tools: list[str]
    evals_listed: bool  # explicit config array (no helper/transformer skipping)


def find_entrypoints(config: BenchmarkConfig, diags: Diagnostics) -> Entrypoints:
    evals = config.evals if config.evals is not None else discover(config.root, "evals", diags)
    tools = config.tools if config.tools is not None else discover(config.root, "tools", diags)
    for path in ([] if config.evals is not None else evals) + ([] if config.tools is not None else tools):
        if not real_path(config.root / path).is_relative_to(real_path(config.root)):
            diags.error(
                "symlink-outside-root",
                "the module is a symlink that resolves outside the benchmark root",
                file=path,
                hint="keep benchmark modules inside the benchmark root",
            )
    if not evals and config.evals is None:
        diags.error(
            "no-evals",
            "no eval modules found under evals/",
            file=config.config_file,
            hint="add evals/<name>.ts with `export default { id, prompt, evaluate }`, or list evals in benchmark.config",
        )
    return Entrypoints(evals, tools, config.evals is not None)
