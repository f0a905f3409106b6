"""The report's front end (report/web/, plain ES modules and CSS), bundled
at report time by the pinned esbuild with its libraries from the toolchain
(js/report_bundle.mjs): one script and one stylesheet to inline."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import orjson

from trunchbull.diagnostics import UsageError
from trunchbull.toolchain import JS_DIR, toolchain

WEB_DIR = Path(__file__).resolve().parent / "web"
ENTRY = WEB_DIR / "main.js"


@dataclass(frozen=True)
class FrontEnd:
    js: str
    css: str


def bundle_front_end() -> FrontEnd:
    tc = toolchain()
    proc = subprocess.run([str(tc.node), str(JS_DIR / "report_bundle.mjs"), str(ENTRY)], capture_output=True,
                          env=tc.base_env(), cwd=WEB_DIR)
    if proc.returncode != 0:
        raise UsageError(f"bundling the report's front end failed (is the toolchain complete? "
                         f"delete it to reinstall): {proc.stderr.decode(errors='replace').strip()}")
    out = orjson.loads(proc.stdout)
    return FrontEnd(out["js"], out["css"])
