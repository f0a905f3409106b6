"""The environment in which the benches run the CLI of this checkout: the one
./trunchbull gives it (tools/bootstrap.sh). Compiled bytecode is cached under
.cache/pycache even where the environment turns bytecode writing off
(PYTHONDONTWRITEBYTECODE, set on these machines). Without that, every CLI
process compiles its modules afresh (~0.14 s for `run`'s imports). An
installed trunchbull never pays that cost, because pip compiles on install,
and the Python peers do not pay it either (peers.py compiles their venv)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def cli_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "PYTHONPYCACHEPREFIX": str(REPO / ".cache" / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra)
    return env
