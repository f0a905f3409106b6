"""What the compile-time checks of evaluator specs share: the problem they
report, and the check of an `expected` string."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SpecProblem:
    path: str  # relative to the spec, "" for the spec itself
    code: str
    message: str
    hint: str | None = None


def join(path: str, key: str | int) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else key)


def check_expected_string(spec: dict, problems: list[SpecProblem], *, strict_whitespace: bool) -> None:
    expected = spec.get("expected")
    if "expected" not in spec:
        problems.append(
            SpecProblem(
                "",
                "evaluator-missing-expected",
                f"evaluator {spec['kind']} requires expected",
                f'write {{ kind: "{spec["kind"]}", expected: "…" }}',
            )
        )
    elif not isinstance(expected, str) or not expected.strip():
        problems.append(
            SpecProblem(
                "expected",
                "evaluator-expected",
                "expected must be a non-empty string",
                "use non_empty to accept any answer",
            )
        )
    elif strict_whitespace and expected != expected.strip():
        problems.append(
            SpecProblem(
                "expected",
                "evaluator-expected",
                "expected of an exact evaluator must not start or end with whitespace",
                "exact compares the trimmed output, so surrounding whitespace can never match",
            )
        )
