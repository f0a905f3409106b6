"""Repair of pex's shared cache after the uncompressed PEX builds of trunchbull-pants 0.1.0.

pex 2.1.137 (Pants 2.17's pex CLI) caches each wheel's zip of a packed PEX in
`<PEX_ROOT>/installed_wheel_zips/<fingerprint>/` (and the bootstrap's in
`bootstrap_zips/<hash>/`), and an *uncompressed* one (`--no-compress`) in an `un-compressed/`
subdirectory of the same directory. Once an uncompressed zip is cached first, the directory
exists, pex takes the compressed entry as already made, and every later compressed PEX that holds
the same wheel fails (`No such file or directory: …/installed_wheel_zips/<fp>/<wheel>`) until
the entry is deleted. The plugin's 0.1.0 built the core's PEX with `--no-compress`; it no longer
does, and this rule removes the entries such a build left behind: a directory whose only entry
(besides pex's lock files) is `un-compressed/`. It runs once per Pants start (not cached), before
the plugin builds its PEX, in the `pex_root` named cache that every Pants PEX build shares.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pants.core.util_rules.adhoc_binaries import PythonBuildStandaloneBinary
from pants.engine.process import Process, ProcessCacheScope, ProcessResult
from pants.engine.rules import Get, collect_rules, rule
from pants.util.logging import LogLevel

logger = logging.getLogger(__name__)

# Pants' named cache of pex (PexEnvironment's `pex_root`), and where a Process sees it.
PEX_ROOT_CACHE = "pex_root"
PEX_ROOT_IN_SANDBOX = ".cache/pex_root"

# Prints the entries it removed, one per line. An entry is set aside by a rename first, so a
# concurrent pex never sees it half deleted.
REPAIR_SCRIPT = """\
import os, shutil, sys
root = sys.argv[1]
for cache in ("installed_wheel_zips", "bootstrap_zips"):
    base = os.path.join(root, cache)
    try:
        names = sorted(os.listdir(base))
    except OSError:
        continue
    for name in names:
        entry = os.path.join(base, name)
        if name.startswith(".") or not os.path.isdir(os.path.join(entry, "un-compressed")):
            continue
        rest = [n for n in os.listdir(entry) if n != "un-compressed" and not n.endswith(".atomic_directory.lck")]
        if rest:
            continue
        aside = "%s.trunchbull-removed-%d" % (entry, os.getpid())
        try:
            os.rename(entry, aside)
        except OSError:
            continue
        shutil.rmtree(aside, ignore_errors=True)
        print(os.path.join(cache, name))
"""


@dataclass(frozen=True)
class PexCacheRepairRequest:
    pass


@dataclass(frozen=True)
class PexCacheRepaired:
    removed: tuple[str, ...]


@rule(desc="Check pex's cache for entries left by uncompressed PEX builds", level=LogLevel.DEBUG)
async def repair_pex_cache(_: PexCacheRepairRequest, python: PythonBuildStandaloneBinary) -> PexCacheRepaired:
    result = await Get(
        ProcessResult,
        Process(
            argv=(python.path, "-c", REPAIR_SCRIPT, PEX_ROOT_IN_SANDBOX),
            description="Check pex's cache for entries left by uncompressed PEX builds",
            append_only_caches={**python.APPEND_ONLY_CACHES, PEX_ROOT_CACHE: PEX_ROOT_IN_SANDBOX},
            cache_scope=ProcessCacheScope.PER_RESTART_SUCCESSFUL,
            level=LogLevel.DEBUG,
        ),
    )
    removed = tuple(result.stdout.decode().split())
    if removed:
        logger.warning(
            f"Removed {len(removed)} entries of pex's cache (named cache `{PEX_ROOT_CACHE}`) that an "
            "uncompressed PEX build of trunchbull-pants 0.1.0 had left and that broke other PEX "
            "builds sharing their wheels: " + ", ".join(removed)
        )
    return PexCacheRepaired(removed)


def rules():
    return collect_rules()
