"""Trunchbull's Pants plugin: compile TS/JS LLM eval benchmarks into releases.

Enable it with `backend_packages.add = ["trunchbull_pants"]` (and, from a wheelhouse or an
index, `plugins = ["trunchbull-pants==VERSION"]`); see docs/pants.md.
"""

from pants.backend.python.util_rules import pex, pex_from_targets, python_sources

from trunchbull_pants import (
    benchmark_deps,
    closure,
    compile_release,
    core,
    dependency_inference,
    failures,
    generate,
    npm,
    pex_cache,
    steps,
    toolchain,
)
from trunchbull_pants.goals import check, package
from trunchbull_pants.subsystems import TrunchbullSubsystem
from trunchbull_pants.target_types import target_types as _target_types


def target_types():
    return _target_types()


def rules():
    failures.install()  # a broken benchmark fails `package` as a linter fails, without a traceback
    return [
        *TrunchbullSubsystem.rules(),
        *npm.rules(),
        *toolchain.rules(),
        *core.rules(),
        *pex_cache.rules(),
        *generate.rules(),
        *dependency_inference.rules(),
        *benchmark_deps.rules(),
        *closure.rules(),
        *steps.rules(),
        *compile_release.rules(),
        *package.rules(),
        *check.rules(),
        # The core runs from a PEX: Pants' PEX rules (and, for `[trunchbull].core`, building one
        # from Python targets), so a repository without the Python backend can use the plugin.
        *pex.rules(),
        *pex_from_targets.rules(),
        *python_sources.rules(),
    ]
