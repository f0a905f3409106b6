"""The report's front end (report/html/web/, plain ES modules and CSS), bundled
at report time by the pinned esbuild with its libraries from the toolchain
(js/report/bundle.mjs): one script and one stylesheet to inline. The bundle
is kept in the cache directory under the SHA-256 of everything that goes
into it (the front end's sources, the bundling script, the toolchain
lockfile), so only the first report after a change pays for esbuild."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import orjson

from trunchbull.common import lifetime
from trunchbull.common.diagnostics import UsageError
from trunchbull.common.files import write_atomic
from trunchbull.node.protocol import REPORT_BUNDLER, ProtocolError
from trunchbull.node.toolchain import JS_DIR, cache_root, toolchain

WEB_DIR = Path(__file__).resolve().parent / "web"
ENTRY = WEB_DIR / "main.js"


@dataclass(frozen=True)
class FrontEnd:
    js: str
    css: str


def _inputs_digest(lockfile: Path) -> str:
    digest = hashlib.sha256()
    files = sorted(WEB_DIR.glob("*.js")) + sorted(WEB_DIR.glob("*.css")) + [JS_DIR / "report/bundle.mjs", lockfile]
    for path in files:
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def bundle_front_end() -> FrontEnd:
    tc = toolchain()
    lockfile = tc.root / "package-lock.json"
    cached = None
    if lockfile.is_file():
        cached = cache_root() / "report-bundles" / f"{_inputs_digest(lockfile)}.json"
        try:
            out = orjson.loads(cached.read_bytes())
            return FrontEnd(out["js"], out["css"])
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
            pass
    proc = lifetime.run([str(tc.node), str(JS_DIR / "report/bundle.mjs"), str(ENTRY)], env=tc.base_env(), cwd=WEB_DIR)
    try:
        out = REPORT_BUNDLER.single(proc.stdout.encode())
        if type(out) is not dict or type(out.get("js")) is not str or type(out.get("css")) is not str:
            raise ProtocolError(f"{REPORT_BUNDLER.process} answered without the bundle")
    except ProtocolError as err:
        stderr = proc.stderr.strip()
        raise UsageError(
            "bundling the report's front end failed (is the toolchain complete? delete it to reinstall): "
            + str(err)
            + (f"\n{stderr}" if stderr else "")
        ) from None
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(cached, orjson.dumps(out))
        except OSError:
            pass  # a read-only cache only costs the next report a bundle
    return FrontEnd(out["js"], out["css"])
