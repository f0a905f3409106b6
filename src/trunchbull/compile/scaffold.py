"""`trunchbull init`: scaffold a small benchmark that builds as it is."""

from __future__ import annotations

from pathlib import Path

from trunchbull.common.diagnostics import UsageError

CONFIG = """\
export default {
  protocolVersion: 1,
  title: "My benchmark",
  version: "0.1.0",
}
"""

EVAL = """\
export default {
  id: "capitals",
  title: "Capital cities",
  systemPrompt: "Answer with the city name only.",
  evaluate: { kind: "contains" },
  cases: "./capitals.csv",
}
"""

CSV = """\
id,prompt,expected
capitals.france,What is the capital of France?,Paris
capitals.japan,What is the capital of Japan?,Tokyo
"""

FILES = {
    "benchmark.config.ts": CONFIG,
    "evals/capitals.ts": EVAL,
    "evals/capitals.csv": CSV,
}


def scaffold(directory: Path) -> list[Path]:
    """Write the benchmark into `directory`, which must be new or hold only
    dot-files (a fresh repository's .git): nothing is written beside a user's
    files. All files or none."""
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} exists and is not a directory; init writes a new benchmark directory")
    try:
        present = (
            sorted(p.name for p in directory.iterdir() if not p.name.startswith(".")) if directory.is_dir() else []
        )
    except OSError as err:
        raise UsageError(f"cannot read {directory}: {err.strerror or err}") from None
    if present:
        shown = ", ".join(present[:3]) + (" …" if len(present) > 3 else "")
        raise UsageError(
            f"{directory} is not empty ({shown}); init writes only into a new or empty directory: "
            "choose another, e.g. trunchbull init my-benchmark"
        )
    created: list[Path] = []
    try:
        for name, text in FILES.items():
            path = directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            created.append(path)
    except OSError as err:
        for path in reversed(created):
            path.unlink(missing_ok=True)
        raise UsageError(f"cannot write the benchmark into {directory}: {err.strerror or err}") from None
    return created
