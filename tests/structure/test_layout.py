"""The package's layout keeps its promises (docs/architecture.md): no import
cycle between modules, no private name imported from another module, no
module past the size where it usually holds two jobs, and a data flow that
runs one way between the stage packages."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "src" / "trunchbull"
MAX_LINES = 450
# stage package → the stage packages it may import (the two pipelines run one way)
ALLOWED = {
    "common": set(),
    "stats": set(),
    "node": {"common"},
    "release": {"common", "node", "compile"},  # compile only for the runtime dependencies' installer
    "compile": {"common", "node", "release", "evaluators"},
    "evaluators": {"common", "node", "release"},
    "grading": {"common", "node", "release", "evaluators", "rundir", "stats"},
    "rundir": {"common", "release"},
    "run": {"common", "node", "release", "compile", "evaluators", "grading", "rundir", "stats"},
    "report": {"common", "node", "release", "grading", "rundir", "stats"},
}


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(path: Path, known: dict[str, Path], module_level: bool) -> list[tuple[str, list[str]]]:
    """(imported module, names) for each `from trunchbull… import …` / `import trunchbull…`."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if module_level else list(ast.walk(tree))
    out = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("trunchbull"):
            names = [alias.name for alias in node.names]
            for name in names:  # `from trunchbull.common import lifetime` imports a module
                if f"{node.module}.{name}" in known:
                    out.append((f"{node.module}.{name}", []))
            out.append((node.module, [n for n in names if f"{node.module}.{n}" not in known]))
        elif isinstance(node, ast.Import):
            out.extend((alias.name, []) for alias in node.names if alias.name.startswith("trunchbull"))
    return out


def test_no_import_cycle_between_modules():
    known = modules()
    graph = {
        name: {m for m, _ in imports(path, known, module_level=True) if m in known and m != name}
        for name, path in known.items()
    }
    for name in graph:  # a package's __init__ is imported with any of its modules: not an edge of interest
        graph[name] = {m for m in graph[name] if not name.startswith(m + ".")}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt) :] + [nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_no_private_name_is_imported_from_another_module():
    known = modules()
    private = [
        f"{name} imports {module}.{n}"
        for name, path in known.items()
        for module, names in imports(path, known, module_level=False)
        for n in names
        if n.startswith("_") and not n.startswith("__") and module != name
    ]
    assert private == []


@pytest.mark.parametrize("name", sorted(modules()))
def test_no_module_is_too_large(name):
    lines = modules()[name].read_text().count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines: it probably does two jobs; split it by job"


def test_stage_packages_import_only_what_comes_before_them():
    known = modules()
    wrong = []
    for name, path in known.items():
        parts = name.split(".")
        if len(parts) < 3 or parts[1] not in ALLOWED:
            continue
        stage = parts[1]
        for module, _ in imports(path, known, module_level=False):
            other = module.split(".")[1] if module.count(".") >= 1 else ""
            if other in ALLOWED and other != stage and other not in ALLOWED[stage]:
                wrong.append(f"{name} imports {module}")
    assert wrong == []


# What writes a run directory's files; outside rundir/, reached only through rundir/writer.py.
RUN_DIR_WRITING = re.compile(r"^(write_|drop_)|^(RecordLog|run_dir_lock)$")
RUN_DIR_FILES = {"RUN_JSON", "RESPONSES", "RESULTS", "SUMMARY", "JUDGMENTS"}
FILE_WRITERS = {"write_atomic", "write_file", "write_all"}


def test_only_the_run_directory_writer_writes_a_run_directory():
    """rundir/writer.py is the one writer: no module elsewhere imports what
    writes a run directory's files from another rundir module, cuts the log
    (`read_records(drop_torn=True)`), or writes bytes to a path it names
    with a run directory's file name."""
    known = modules()
    wrong = []
    for name, path in known.items():
        if name.startswith("trunchbull.rundir"):
            continue
        imported = imports(path, known, module_level=False)
        for module, names in imported:
            if module.startswith("trunchbull.rundir.") and module != "trunchbull.rundir.writer":
                wrong += [f"{name} imports {module}.{n}" for n in names if RUN_DIR_WRITING.search(n)]
        file_names = {n for module, names in imported if module == "trunchbull.rundir.layout" for n in names}
        writers = {n for module, names in imported if module == "trunchbull.common.files" for n in names}
        if file_names & RUN_DIR_FILES and writers & FILE_WRITERS:
            wrong.append(f"{name} names a run directory's files and imports {sorted(writers & FILE_WRITERS)}")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "drop_torn":
                wrong.append(f"{name} cuts a run's log (drop_torn)")
    assert wrong == []
