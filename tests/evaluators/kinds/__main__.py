"""`python -m tests.evaluators.kinds ARGS…`: the trunchbull CLI, unchanged,
with this package's kinds added to the registry for the command (build,
check, run and grade all see them)."""

import sys

from trunchbull.cli import main
from trunchbull.evaluators.registry import kinds_from

with kinds_from(__package__ or "tests.evaluators.kinds"):
    code = main()
sys.exit(code)
