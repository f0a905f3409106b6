"""`pip install .`: every package under src/ (found, not listed) plus the pinned Node toolchain's
lockfile as `trunchbull.toolchain` (third_party/npm), the local model runtime's as
`trunchbull.npm_llamacpp` (third_party/npm-llamacpp) and that of `check --types`'s TypeScript as
`trunchbull.npm_typescript` (third_party/npm-typescript). Metadata is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(
            "src", include=["trunchbull", "trunchbull.*"], exclude=["*.__pycache__", "*.node_modules*"]
        ),
        "trunchbull.toolchain",
        "trunchbull.npm_llamacpp",
        "trunchbull.npm_typescript",
    ],
    package_dir={
        "": "src",
        "trunchbull.toolchain": "third_party/npm",
        "trunchbull.npm_llamacpp": "third_party/npm-llamacpp",
        "trunchbull.npm_typescript": "third_party/npm-typescript",
    },
)
