"""The registries' one way of finding their entries (common/registry.py):
every public module but the plumbing defines the entry; one that does not is
an error naming it. Checked on real packages written to a directory on
sys.path, and on the three registries of the product."""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from trunchbull.common.registry import RegistryError, find_entries
from trunchbull.compile.cases.sources import PLUMBING as CASE_PLUMBING
from trunchbull.compile.cases.sources import sources
from trunchbull.evaluators.registry import kinds
from trunchbull.report.exports.formats import PLUMBING as EXPORT_PLUMBING
from trunchbull.report.exports.formats import formats


@dataclass(frozen=True)
class Entry:
    name: str


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A fresh package under tmp_path, written from {module: source}."""
    made = []

    def make(files: dict[str, str]) -> str:
        name = f"registry_fixture_{len(made)}_{tmp_path.name}".replace("-", "_")
        root = tmp_path / name
        root.mkdir()
        (root / "__init__.py").write_text("")
        for module, source in files.items():
            (root / f"{module}.py").write_text(source)
        made.append(name)
        return name

    monkeypatch.syspath_prepend(str(tmp_path))
    yield make
    for name in made:
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


ENTRY = "from tests.common.test_registry import Entry\nENTRY = Entry({!r})\n"


def test_every_public_module_but_the_plumbing_gives_its_entry(package):
    name = package({"b": ENTRY.format("b"), "a": ENTRY.format("a"), "_private": "", "helpers": "X = 1\n"})
    found = find_entries(name, "ENTRY", Entry, plumbing=("helpers",))
    assert [entry.name for entry in found] == ["a", "b"]


def test_a_module_without_its_entry_is_an_error_naming_it(package):
    name = package({"a": ENTRY.format("a"), "forgot": "ENTRYY = 1\n"})
    with pytest.raises(RegistryError, match=rf"{name}\.forgot defines no ENTRY \(a Entry\)"):
        find_entries(name, "ENTRY", Entry)


def test_an_entry_of_the_wrong_type_is_an_error(package):
    name = package({"a": "ENTRY = 'a'\n"})
    with pytest.raises(RegistryError, match=rf"{name}\.a defines no ENTRY"):
        find_entries(name, "ENTRY", Entry)


def test_plumbing_that_is_not_there_is_an_error(package):
    name = package({"a": ENTRY.format("a")})
    with pytest.raises(RegistryError, match="has no module gone, named as its plumbing"):
        find_entries(name, "ENTRY", Entry, plumbing=("gone",))


def public_modules(package: str) -> set[str]:
    directory = Path(importlib.import_module(package).__path__[0])
    return {path.stem for path in directory.glob("*.py") if not path.stem.startswith("_")}


def test_the_product_registries_find_an_entry_in_each_module_but_their_plumbing():
    assert len(kinds()) == len(public_modules("trunchbull.evaluators.kinds"))
    assert len(sources()) == len(public_modules("trunchbull.compile.cases") - set(CASE_PLUMBING))
    assert {".csv", ".jsonl"} <= set(sources())
    assert len(formats()) == len(public_modules("trunchbull.report.exports") - set(EXPORT_PLUMBING))
    assert {"csv", "junit", "parquet"} <= set(formats())
