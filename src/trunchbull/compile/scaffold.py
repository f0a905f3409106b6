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
    existing = [directory / name for name in FILES if (directory / name).exists()]
    if existing:
        raise UsageError(f"{existing[0]} already exists; init writes only into a new or empty benchmark")
    created = []
    for name, text in FILES.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        created.append(path)
    return created
