"""Grading tests use the evaluator tests' fixture benchmarks (built once per session)."""

from tests.evaluators.conftest import FIXTURES, built, cli, read_jsonl, write_jsonl  # noqa: F401 - shared fixtures
