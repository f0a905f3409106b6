"""What a transformer run that produced no cases says about why, as a
diagnostic's (code, message, hint)."""

from __future__ import annotations

from trunchbull.compile.transformer.runs import Limits
from trunchbull.compile.transformer.spec import DEADLINE_ENV, MEMORY_ENV
from trunchbull.node.sandbox import SandboxResult
from trunchbull.release.manifest import MAX_CASES


def run_failure(run: SandboxResult, limits: Limits) -> tuple[str, str, str | None]:
    """(code, message, hint) for a run that produced no response; the
    message ends with the head and tail of what the run printed."""
    code, message, hint = _why_no_response(run, limits)
    return code, message + run.stderr.described(), hint


def _why_no_response(run: SandboxResult, limits: Limits) -> tuple[str, str, str | None]:
    if run.timed_out:
        return (
            "transformer-deadline",
            f"stopped at the deadline: the run did not finish within {limits.deadline_s:g} s "
            f"(limit: deadline, {DEADLINE_ENV})",
            f"transform must finish; raise the deadline with {DEADLINE_ENV}=SECONDS if it is just slow",
        )
    err = run.stderr.text()
    if "heap out of memory" in err or "Reached heap limit" in err or "Allocation failed" in err:
        return (
            "transformer-memory",
            f"stopped at the memory cap: the run exceeded {limits.memory_mb} MB of heap "
            f"(limit: memory, {MEMORY_ENV})",
            f"reduce memory use, or raise the cap with {MEMORY_ENV}=MB",
        )
    if "ERR_ACCESS_DENIED" in err:
        return (
            "transformer-sandbox",
            f"stopped by the sandbox: {last_error_line(err)}",
            "transformers may not write files, start processes or workers, or read outside their sources",
        )
    if run.returncode == 0:
        return (
            "transformer-crash",
            "the run ended without a result (did the transformer call process.exit?)",
            "transform must return its cases, not exit the process",
        )
    return ("transformer-crash", f"the run crashed Node (exit {run.returncode}): {last_error_line(err)}", None)


def reported_failure(response: dict) -> tuple[str, str, str | None]:
    stage = response.get("stage")
    if stage == "export":
        return (
            "transformer-export",
            "; ".join(response.get("problems") or ["invalid default export"]),
            "a transformer module must `export default { name, transform }`",
        )
    if stage == "sandbox":
        return (
            "transformer-sandbox",
            f"stopped by the sandbox: it attempted {response.get('error')}, which is forbidden",
            "transformers may not write files, start processes or workers, or read outside their sources",
        )
    if stage == "result":
        return (
            "too-many-cases",
            f"transform returned {response.get('count') or 0:,} cases; the release limit is {MAX_CASES:,} "
            "(limit: case count)",
            "split the data across several releases",
        )
    return (
        "transformer-error",
        f"transform threw {response.get('error')}",
        "transform must return an array of cases",
    )


def last_error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.startswith("Node.js v")]
    errors = [line for line in lines if "Error" in line]
    return (errors or lines or ["no output"])[-1][:500]
