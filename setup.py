"""`pip install .`: every package under src/ (found, not listed) plus the pinned Node toolchain's
lockfile as `trunchbull.toolchain` (third_party/npm). Metadata is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(
            "src", include=["trunchbull", "trunchbull.*"], exclude=["*.__pycache__", "*.node_modules*"]
        ),
        "trunchbull.toolchain",
    ],
    package_dir={"": "src", "trunchbull.toolchain": "third_party/npm"},
)
