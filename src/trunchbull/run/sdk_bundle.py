"""The AI SDK as a run worker imports it: the toolchain's `ai` and one
provider package, bundled by the toolchain's esbuild into a single module,
once per toolchain and provider, in the cache.

Importing the packages as installed reads a few hundred files: ~200 ms for
`ai` and @ai-sdk/openai-compatible, against ~90 ms for the same code as one
bundle (~170 against ~65 ms for `ai` alone), in every worker of every run.
Only what the worker uses is exported (and kept): the AI SDK calls below and
the provider's factory (providers.py), which js/run/models.mjs calls by its name."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from trunchbull.common import lifetime
from trunchbull.common.diagnostics import UsageError
from trunchbull.node.toolchain import Toolchain, cache_root
from trunchbull.run.providers import PROVIDERS

AI_EXPORTS = (
    "generateText",
    "stepCountIs",
    "tool",
    "jsonSchema",
    "asSchema",
    # batch mode (js/run/batch.mjs); a few kB of the bundle
    "experimental_startBatch",
    "experimental_getBatchStatus",
    "experimental_cancelBatch",
    "experimental_listBatches",
)
# Whitespace and syntax only: names stay as they are, in stack traces too.
# Some dependencies require() Node built-ins, which an ES module bundle can
# only do through a require of its own.
ESBUILD_FLAGS = (
    "--bundle",
    "--format=esm",
    "--platform=node",
    "--minify-whitespace",
    "--minify-syntax",
    "--log-level=error",
    "--banner:js=import { createRequire as __trunchbullRequire } from 'node:module'; "
    "const require = __trunchbullRequire(import.meta.url);",
)


def entry_source(provider: str | None) -> str:
    lines = [f'export {{ {", ".join(AI_EXPORTS)} }} from "ai";']
    entry = PROVIDERS[provider] if provider is not None else None
    if entry is not None and entry.package:
        lines.append(f'export {{ {entry.factory} }} from "{entry.package}";')
    return "\n".join(lines) + "\n"


def sdk_bundle(tc: Toolchain, provider: str | None) -> Path:
    """The bundle for `provider` (a built-in or local model, or None: `ai` alone),
    built on first use; written whole or not at all."""
    source = entry_source(provider)
    digest = hashlib.sha256()
    for part in ((tc.root / "package-lock.json").read_bytes(), source.encode(), "\0".join(ESBUILD_FLAGS).encode()):
        digest.update(part + b"\0")
    target = cache_root() / "sdk" / f"{digest.hexdigest()[:16]}.mjs"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    entry = target.with_name(f"{target.stem}.entry{os.getpid()}.mjs")
    staging = target.with_name(f"{target.stem}.tmp{os.getpid()}.mjs")
    try:
        entry.write_text(source)
        esbuild = tc.root / "node_modules" / ".bin" / "esbuild"
        result = lifetime.run(
            [str(esbuild), str(entry), *ESBUILD_FLAGS, f"--outfile={staging}"],
            env={**tc.base_env(), "NODE_PATH": str(tc.root / "node_modules")},
            cwd=str(tc.root),
        )
        if result.returncode != 0 or not staging.is_file():
            raise UsageError(f"bundling the AI SDK of the toolchain ({tc.root}) failed:\n{result.stderr.strip()}")
        os.replace(staging, target)  # another run may have written the same bytes first
    finally:
        for leftover in (entry, staging):
            leftover.unlink(missing_ok=True)
    return target
