"""The kinds of the tests (tests/evaluators/kinds/) are documented as the
product's are: a row each in their README.md, rendered from the registry."""

from __future__ import annotations

from pathlib import Path

from tests.evaluators.test_registry import doc_row
from trunchbull.evaluators.registry import kinds, kinds_from

README = Path(__file__).resolve().parent / "kinds" / "README.md"


def test_every_kind_of_the_tests_has_its_row():
    text = README.read_text()
    with kinds_from("tests.evaluators.kinds"):
        ours = [kind for kind in kinds().values() if kind.prepare.__module__.startswith("tests.evaluators.kinds.")]
    assert [kind.name for kind in ours] == ["first_step_tools", "judged"]
    for kind in ours:
        assert doc_row(kind) in text, f"{README} lacks the row of {kind.name}:\n{doc_row(kind)}"
