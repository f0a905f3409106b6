"""Trunchbull's Pants plugin: compile TS/JS LLM eval benchmarks into releases.

Enable it with `backend_packages = ["trunchbull_pants"]` (and the directory
holding this package on `[GLOBAL].pythonpath`); see docs/pants.md.
"""

from trunchbull_pants import dependency_inference, generate, rules as release_rules, toolchain
from trunchbull_pants.target_types import target_types as _target_types


def target_types():
    return _target_types()


def rules():
    return [
        *toolchain.rules(),
        *generate.rules(),
        *dependency_inference.rules(),
        *release_rules.rules(),
    ]
