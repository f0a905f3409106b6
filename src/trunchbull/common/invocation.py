"""How the user runs Trunchbull, for the messages that show a command to type
next: this checkout's launcher (`./trunchbull`, relative to the working
directory; the launcher names itself in TRUNCHBULL_LAUNCHER), the installed
`trunchbull` on PATH, or `python -m trunchbull`."""

from __future__ import annotations

import os
import shutil
import sys

LAUNCHER_ENV = "TRUNCHBULL_LAUNCHER"


def command() -> str:
    launcher = os.environ.get(LAUNCHER_ENV)
    if launcher:
        on_path = shutil.which(os.path.basename(launcher))
        if on_path and os.path.realpath(on_path) == os.path.realpath(launcher):
            return os.path.basename(launcher)
        try:
            relative = os.path.relpath(launcher)
        except ValueError:  # another drive (Windows)
            return launcher
        relative = relative if os.sep in relative else f".{os.sep}{relative}"
        return relative if len(relative) <= len(launcher) else launcher
    program = sys.argv[0] if sys.argv else ""
    if os.path.basename(program) == "trunchbull":  # the installed console script
        found = shutil.which("trunchbull")
        same = found is not None and os.path.realpath(found) == os.path.realpath(program)
        return "trunchbull" if same else program
    if program.endswith("__main__.py"):
        return f"{os.path.basename(sys.executable) or 'python'} -m trunchbull"
    return "trunchbull"


def resume_command(run_dir, extra: str = "") -> str:
    """The command that continues the run in `run_dir`, as the user runs Trunchbull."""
    return f"{command()} run … -o {run_dir} --resume{extra}"
