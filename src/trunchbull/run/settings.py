"""What a run is asked to do, besides the model: call settings, loop and
time limits, retries, concurrency, filters and repeats. Recorded in run.json
and compared on `--resume`."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from trunchbull.common.diagnostics import UsageError

DEFAULTS: dict[str, Any] = {
    "maxSteps": 8,
    "timeout": 300.0,
    "toolTimeout": 30.0,
    "retries": 6,
    "concurrency": 16,
    "maxResponseBytes": 1 << 20,
    "maxToolResultBytes": 1 << 20,
}
# The least either byte limit may be: room for a marker saying what was cut.
MIN_LIMIT_BYTES = 1024
# Settings that only decide how fast a run goes, not what a sample is: they
# may differ on --resume.
SCHEDULING_ONLY = ("concurrency",)


@dataclass(frozen=True)
class RunSettings:
    temperature: float | None = None
    maxTokens: int | None = None
    topP: float | None = None
    seed: int | None = None
    maxSteps: int = DEFAULTS["maxSteps"]
    timeout: float = DEFAULTS["timeout"]
    toolTimeout: float = DEFAULTS["toolTimeout"]
    retries: int = DEFAULTS["retries"]
    concurrency: int = DEFAULTS["concurrency"]
    maxResponseBytes: int = DEFAULTS["maxResponseBytes"]  # a model's text (and tool-call arguments) per step
    maxToolResultBytes: int = DEFAULTS["maxToolResultBytes"]  # one tool result's JSON

    def __post_init__(self) -> None:
        checks = [
            ("temperature", "--temperature", lambda v: v >= 0, "a number ≥ 0"),
            ("maxTokens", "--max-tokens", lambda v: v >= 1, "an integer ≥ 1"),
            ("topP", "--top-p", lambda v: 0 < v <= 1, "a number in (0, 1]"),
            ("maxSteps", "--max-steps", lambda v: v >= 1, "an integer ≥ 1"),
            ("timeout", "--timeout", lambda v: v > 0, "a number of seconds > 0"),
            ("toolTimeout", "--tool-timeout", lambda v: v > 0, "a number of seconds > 0"),
            ("retries", "--retries", lambda v: v >= 0, "an integer ≥ 0"),
            ("concurrency", "-j/--concurrency", lambda v: v >= 1, "an integer ≥ 1"),
            ("maxResponseBytes", "--max-response-bytes", lambda v: MIN_LIMIT_BYTES <= v < 1 << 30, "1024 to 2^30 − 1"),
            (
                "maxToolResultBytes",
                "--max-tool-result-bytes",
                lambda v: MIN_LIMIT_BYTES <= v < 1 << 30,
                "1024 to 2^30 − 1",
            ),
        ]
        for name, flag, ok, what in checks:
            value = getattr(self, name)
            if value is not None and not ok(value):
                raise UsageError(f"{flag} takes {what}, got {value:g}")

    def call_settings(self) -> dict:
        """The AI SDK call settings that were given (generateText's names)."""
        named = {
            "temperature": self.temperature,
            "maxOutputTokens": self.maxTokens,
            "topP": self.topP,
            "seed": self.seed,
        }
        return {k: v for k, v in named.items() if v is not None}

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Filters:
    evals: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()  # globs over case IDs
    limit: int | None = None

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise UsageError(f"--limit takes an integer ≥ 1, got {self.limit}")

    def to_json(self) -> dict:
        return {"eval": list(self.evals), "case": list(self.cases), "limit": self.limit}


def check_repeat(repeat: int) -> int:
    if repeat < 1:
        raise UsageError(f"--repeat takes an integer ≥ 1, got {repeat}")
    return repeat
