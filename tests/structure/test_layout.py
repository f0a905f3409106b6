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
# stage package → the stage packages it may import (the two pipelines run one way);
# the top-level modules (cli.py, __main__.py) may import any of them
ALLOWED = {
    "common": set(),
    "stats": set(),
    "node": {"common"},
    "release": {"common", "node"},
    "compile": {"common", "node", "release", "evaluators"},
    "evaluators": {"common", "node", "release"},
    "grading": {"common", "node", "release", "evaluators", "rundir", "stats"},
    "rundir": {"common", "release"},
    "run": {"common", "node", "release", "compile", "evaluators", "grading", "rundir", "stats"},
    # report: compare's pairwise judging renders and reads a judge's request (evaluators/pairwise.py)
    "report": {"common", "node", "release", "evaluators", "grading", "rundir", "stats"},
}


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(path: Path, known: dict[str, Path], source: str | None = None) -> list[tuple[str, list[str]]]:
    """(imported module, names) for every `from trunchbull… import …` / `import
    trunchbull…` of a module, wherever it stands: at the top, in a function,
    under `if TYPE_CHECKING`. Relative imports are resolved against the module."""
    tree = ast.parse(path.read_text() if source is None else source)
    here = path.relative_to(PACKAGE.parent).with_suffix("").parts
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = here[: len(here) - node.level]
                module = ".".join([*base, *([module] if module else [])])
            if not module.startswith("trunchbull"):
                continue
            names = [alias.name for alias in node.names]
            for name in names:  # `from trunchbull.common import lifetime` imports a module
                if f"{module}.{name}" in known:
                    out.append((f"{module}.{name}", []))
            out.append((module, [n for n in names if f"{module}.{n}" not in known]))
        elif isinstance(node, ast.Import):
            out.extend((alias.name, []) for alias in node.names if alias.name.startswith("trunchbull"))
    return out


def module_graph() -> dict[str, set[str]]:
    """Module → the modules it imports (every import). A package's __init__
    runs with any of its modules, so a module's import of its own enclosing
    package is no edge of interest."""
    known = modules()
    graph = {}
    for name, path in known.items():
        targets = {m for m, _ in imports(path, known) if m in known and m != name}
        graph[name] = {m for m in targets if not name.startswith(m + ".")}
    return graph


def stage(module: str) -> str:
    """The stage package of a module (`trunchbull.run.command` → `run`); "" for cli.py and __main__.py."""
    parts = module.split(".")
    return parts[1] if len(parts) >= 3 or (len(parts) == 2 and parts[1] in ALLOWED) else ""


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk meets (one per back edge), as the path that closes it."""
    found: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(trail[trail.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return found


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_every_import_is_read():
    """Imports inside functions, under `if TYPE_CHECKING` and relative ones count."""
    path = PACKAGE / "release" / "example.py"
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from trunchbull.run import samples\n"
        "def f():\n    from trunchbull.compile.deps import find_dependencies\n"
        "    from ..grading import grader\n"
    )
    found = imports(path, modules(), source)
    assert ("trunchbull.run.samples", []) in found
    assert ("trunchbull.compile.deps", ["find_dependencies"]) in found
    assert ("trunchbull.grading.grader", []) in found


def test_no_import_cycle_between_modules():
    assert cycles(module_graph()) == []


def test_every_package_is_a_known_stage():
    packages = {stage(name) for name in modules()} - {""}
    assert packages == set(ALLOWED), "add the new package to ALLOWED, after the stages it reads"


def test_the_stages_are_layered_one_way():
    assert cycles(ALLOWED) == []


def test_no_import_cycle_between_packages():
    graph: dict[str, set[str]] = {}
    for name, targets in module_graph().items():
        for target in targets:
            if stage(name) and stage(target) and stage(name) != stage(target):
                graph.setdefault(stage(name), set()).add(stage(target))
    assert cycles(graph) == []


def test_no_private_name_is_imported_from_another_module():
    known = modules()
    private = [
        f"{name} imports {module}.{n}"
        for name, path in known.items()
        for module, names in imports(path, known)
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
    wrong = [
        f"{name} imports {module}"
        for name, path in known.items()
        if stage(name)
        for module, _ in imports(path, known)
        if stage(module) and stage(module) != stage(name) and stage(module) not in ALLOWED[stage(name)]
    ]
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
        imported = imports(path, known)
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


# Names that every module of a kind defines by convention (an evaluator kind's
# `prepare` and `check`, an entry point's `main` and `build_parser`).
CONVENTIONAL_NAMES = {"prepare", "check", "main", "build_parser"}


def test_each_public_name_means_one_thing():
    """No two modules define the same public function or class: a name read
    anywhere says which one it is."""
    defined: dict[str, list[str]] = {}
    for name, path in modules().items():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not node.name.startswith("_") and node.name not in CONVENTIONAL_NAMES:
                    defined.setdefault(node.name, []).append(name)
    assert {name: where for name, where in defined.items() if len(where) > 1} == {}
