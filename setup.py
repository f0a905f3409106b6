"""`pip install .`: every package under src/ (found, not listed) plus the pinned Node toolchain's
lockfile as `trunchbull.toolchain` (third_party/npm) and the local model runtime's as
`trunchbull.npm_llamacpp` (third_party/npm-llamacpp). Metadata is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(
            "src", include=["trunchbull", "trunchbull.*"], exclude=["*.__pycache__", "*.node_modules*"]
        ),
        "trunchbull.toolchain",
        "trunchbull.npm_llamacpp",
    ],
    package_dir={
        "": "src",
        "trunchbull.toolchain": "third_party/npm",
        "trunchbull.npm_llamacpp": "third_party/npm-llamacpp",
    },
)
