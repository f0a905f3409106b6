"""The `[trunchbull]` options scope."""

from __future__ import annotations

from pants.option.option_types import IntOption, StrListOption, StrOption
from pants.option.subsystem import Subsystem
from pants.util.strutil import help_text


class TrunchbullSubsystem(Subsystem):
    options_scope = "trunchbull"
    name = "Trunchbull"
    help = help_text(
        """
        Compile TypeScript/JavaScript LLM eval benchmarks into immutable, reproducible releases
        (`trunchbull_release` targets). Every compile step runs the Trunchbull core (Python) from a
        PEX, with the pinned Node toolchain installed by Pants from an npm lockfile.
        """
    )

    core = StrOption(
        default="//src/trunchbull:lib",
        help=help_text(
            """
            Address of the `python_sources` target of the Trunchbull core (the `trunchbull`
            package). Its third-party requirements become a PEX; its sources are shipped beside
            the PEX, so editing them does not rebuild the PEX. In another repository, vendor the
            `trunchbull` package (or add it as a `python_requirement`) and point this here.
            """
        ),
        advanced=True,
    )
    toolchain_lockfile = StrOption(
        default="//:npm-toolchain-lock",
        help=help_text(
            """
            Address of a `files` target holding the `package.json` and `package-lock.json` of the
            pinned Node toolchain (Node 22, esbuild, @babel/parser, the AI SDK). Pants installs it
            once with `npm ci` in a sandboxed process and links the result into every Node
            process; its digest (and so the Node binary's) is part of every cache key.
            """
        ),
        advanced=True,
    )
    bootstrap_search_path = StrListOption(
        default=["<PATH>"],
        help=help_text(
            """
            Where to look for the `node` and `npm` that install the toolchain lockfile (and the
            benchmarks' dependency lockfiles). `<PATH>` is the `PATH` of the Pants process. The
            compile steps never use this Node: they use the pinned one.
            """
        ),
        advanced=True,
    )
    install_timeout = IntOption(
        default=600,
        help="Deadline in seconds of one `npm ci` (toolchain or a benchmark's dependencies).",
        advanced=True,
    )
