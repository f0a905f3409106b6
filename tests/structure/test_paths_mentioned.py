"""The paths that comments, docstrings and docs name exist: a moved or
renamed module leaves no stale pointer behind. A path is recognized by its
shape: `src/trunchbull/…`, `js/…` (under src/trunchbull/js/), or a stage
package's module, `run/command.py` (under src/trunchbull/) and
`compile/helper.mjs` (a Node script, under src/trunchbull/js/)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "src" / "trunchbull"
STAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
# Not preceded by a path character: `tests/run/x.py` is no mention of `run/x.py`.
MENTION = re.compile(r"(?<![\w/.\-])((?:src/trunchbull/|js/|(?:%s)/)[\w./\-]*\w)" % "|".join(STAGES))


def sources() -> list[Path]:
    found = [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.mjs"), *(REPO / "docs").glob("*.md"), REPO / "README.md"]
    found += [*(REPO / "rules").rglob("*.py"), *(REPO / "tests").rglob("*.py"), *(REPO / "bench").glob("*.py")]
    # this module's own examples are no mentions
    return [path for path in found if "node_modules" not in path.parts and path != Path(__file__)]


def target(mention: str) -> Path:
    if mention.startswith("src/trunchbull/"):
        return REPO / mention
    if mention.startswith("js/"):
        return PACKAGE / mention
    return PACKAGE / "js" / mention if mention.endswith(".mjs") else PACKAGE / mention


def mentions(text: str) -> list[str]:
    return [m.group(1) for m in MENTION.finditer(text)]


def test_the_mentions_are_recognized():
    text = (
        "see `src/trunchbull/run/command.py`, js/run/worker.mjs and compile/helper.mjs (run/budget.py); "
        "not tests/run/test_x.py, nor node_modules/x/run/y.js."
    )
    assert mentions(text) == [
        "src/trunchbull/run/command.py",
        "js/run/worker.mjs",
        "compile/helper.mjs",
        "run/budget.py",
    ]
    assert [target(m).relative_to(REPO).as_posix() for m in mentions(text)] == [
        "src/trunchbull/run/command.py",
        "src/trunchbull/js/run/worker.mjs",
        "src/trunchbull/js/compile/helper.mjs",
        "src/trunchbull/run/budget.py",
    ]
    assert not target("js/worker.mjs").exists()


def test_every_path_mentioned_exists():
    stale = [
        f"{path.relative_to(REPO)}:{number}: {mention}"
        for path in sources()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        for mention in mentions(line)
        if not target(mention.rstrip(".")).exists()
    ]
    assert stale == []
