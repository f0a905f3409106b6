"""The project's own fuzz tests (issue 12): hostile benchmarks and responses
files through the real CLI, with a fixed, derandomized CI profile (the same
examples on every run). Long, random runs: bench/fuzz.py."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings

from tests.fuzz.properties import build_property, grade_property

CI = settings(
    max_examples=40,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)

pytestmark = pytest.mark.fuzz


def test_hostile_benchmarks_build_or_fail_cleanly():
    CI(build_property)()


def test_hostile_responses_files_grade_or_fail_cleanly():
    settings(CI, max_examples=25)(grade_property)()
