"""The `[trunchbull]` options scope: the core as a Pants-resolved Python tool.

Like Pants' own tools (`[black]`, `[pytest]`), the core is installed from a requirement
(`trunchbull==<this plugin's version>`) with a lockfile shipped inside the plugin
(`trunchbull_pants/trunchbull.lock`), or from a resolve of the user's
(`install_from_resolve`). `core` runs it from source instead (this repository does). The pinned
Node toolchain's npm lockfile ships in the plugin too (`trunchbull_pants/toolchain/`);
`toolchain_lockfile` overrides it.
"""

from __future__ import annotations

from pants.backend.python.subsystems.python_tool_base import PythonToolBase
from pants.backend.python.target_types import EntryPoint
from pants.option.option_types import IntOption, StrListOption, StrOption
from pants.util.strutil import help_text, softwrap

from trunchbull_pants.version import VERSION


class TrunchbullSubsystem(PythonToolBase):
    options_scope = "trunchbull"
    name = "Trunchbull"
    help = help_text(
        """
        Compile TypeScript/JavaScript LLM eval benchmarks into immutable, reproducible releases
        (`trunchbull_release` targets). Every compile step runs the Trunchbull core (Python 3.11+)
        from a PEX, with the pinned Node toolchain installed by Pants from an npm lockfile.

        By default the core is the `trunchbull` distribution of the same version as this plugin,
        installed from the lockfile shipped in the plugin; `install_from_resolve` installs it from
        one of your resolves instead.
        """
    )

    default_version = f"trunchbull=={VERSION}"
    default_requirements = [default_version]
    default_main = EntryPoint("trunchbull.compile.steps")

    register_interpreter_constraints = True
    default_interpreter_constraints = ["CPython>=3.11,<3.15"]

    default_lockfile_resource = ("trunchbull_pants", "trunchbull.lock")

    core = StrOption(
        default=None,
        help=softwrap(
            """
            Run the core from source: the address of the `python_sources` target of the
            `trunchbull` package (e.g. `//src/trunchbull:lib` in Trunchbull's own repository). Its
            third-party requirements become a PEX (from the target's resolve) and its sources are
            shipped beside the PEX, so editing them does not rebuild the PEX. Unset (the default),
            the core is the `trunchbull` distribution, installed like any Pants Python tool.
            """
        ),
        advanced=True,
    )
    toolchain_lockfile = StrOption(
        default=None,
        help=softwrap(
            """
            Address of a `files` target holding the `package.json` and `package-lock.json` of the
            pinned Node toolchain (Node 22, esbuild, @babel/parser, the AI SDK). Unset (the
            default), the lockfile shipped in this plugin is used. Pants installs it once with `npm
            ci` in a sandboxed process and links the result into every Node process; its digest
            (and so the Node binary's) is part of every cache key.
            """
        ),
        advanced=True,
    )
    bootstrap_search_path = StrListOption(
        default=["<PATH>"],
        help=softwrap(
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
