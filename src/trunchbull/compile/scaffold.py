"""`trunchbull init`: scaffold a small benchmark that builds as it is, typed
for editors: its modules check themselves against trunchbull.d.ts with
`satisfies` (authoring_types.py), which a tsconfig.json includes."""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from trunchbull.common.diagnostics import UsageError
from trunchbull.compile.authoring_types import FILE_NAME, MODULE, declarations
from trunchbull.compile.typecheck import TSCONFIG

CONFIG = f"""\
import type {{ Config }} from "{MODULE}"

export default {{
  protocolVersion: 1,
  title: "My benchmark",
  version: "0.1.0",
}} satisfies Config
"""

EVAL = f"""\
import type {{ Eval }} from "{MODULE}"

export default {{
  id: "capitals",
  title: "Capital cities",
  systemPrompt: "Answer with the city name only.",
  evaluate: {{ kind: "contains" }},
  cases: "./capitals.csv",
}} satisfies Eval
"""

CSV = """\
id,prompt,expected
capitals.france,What is the capital of France?,Paris
capitals.japan,What is the capital of Japan?,Tokyo
"""


def _json(value: object) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n"


def package_name(directory: Path) -> str:
    """An npm package name from the directory's name: lowercase, URL-safe."""
    name = re.sub(r"[^a-z0-9._-]+", "-", directory.resolve().name.lower()).strip("-._")
    return name[:214] or "benchmark"


def files(directory: Path) -> dict[str, str]:
    """What init writes, by root-relative name. The lockfile is the one npm writes for a
    package.json without dependencies: the benchmark builds without a network, and
    `npm install ai zod` (for tool modules) adds to both."""
    name = package_name(directory)
    return {
        "benchmark.config.ts": CONFIG,
        "evals/capitals.ts": EVAL,
        "evals/capitals.csv": CSV,
        "package.json": _json({"name": name, "private": True, "type": "module"}),
        "package-lock.json": _json(
            {"name": name, "lockfileVersion": 3, "requires": True, "packages": {"": {"name": name}}}
        ),
        "tsconfig.json": _json({"compilerOptions": TSCONFIG, "exclude": ["dist", "node_modules"]}),
        FILE_NAME: declarations(),
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
        for name, text in files(directory).items():
            path = directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            created.append(path)
    except OSError as err:
        for path in reversed(created):
            path.unlink(missing_ok=True)
        raise UsageError(f"cannot write the benchmark into {directory}: {err.strerror or err}") from None
    return created
