"""The pinned Node toolchain (Node 22, esbuild, parser, AI SDK): where it is
installed, and the command that starts the trusted helper. Light on imports
on purpose: `python -m trunchbull build` starts the helper from here before
the rest of the CLI is imported (see __main__.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from trunchbull.common import lifetime

JS_DIR = Path(__file__).resolve().parents[1] / "js"


def cache_root() -> Path:
    configured = os.environ.get("TRUNCHBULL_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "trunchbull"


def _lock_dir() -> Path:
    """Where the toolchain's package.json + package-lock.json are: the source
    checkout's third_party/npm, or the copy installed as package data."""
    checkout = Path(__file__).resolve().parents[3] / "third_party" / "npm"
    if (checkout / "package-lock.json").is_file():
        return checkout
    return Path(__file__).resolve().parents[1] / "toolchain"  # installed: package data (see pyproject.toml)


def _installed(path: Path) -> bool:
    return (path / "node_modules" / ".bin" / "node").exists()


def installed_toolchain_dir() -> Path | None:
    """The toolchain's directory when it is already installed (nothing is installed here)."""
    configured = os.environ.get("TRUNCHBULL_TOOLCHAIN")
    if configured:
        return Path(configured).resolve() if _installed(Path(configured)) else None
    target = _default_dir()
    return target if _installed(target) else None


def _default_dir() -> Path:
    import hashlib

    digest = hashlib.sha256((_lock_dir() / "package-lock.json").read_bytes()).hexdigest()[:16]
    return cache_root() / "toolchain" / digest


def toolchain_dir() -> Path:
    configured = os.environ.get("TRUNCHBULL_TOOLCHAIN")
    if configured:
        # Its real path: Node resolves a module's path component by component, and a symlink on the
        # way (a checkout's linked .cache) lies outside the sandbox's readable paths.
        path = Path(configured).resolve()
        if not _installed(path):
            from trunchbull.common.diagnostics import UsageError

            raise UsageError(f"TRUNCHBULL_TOOLCHAIN={configured} holds no installed toolchain (node_modules/.bin/node)")
        return path
    target = _default_dir()
    if not _installed(target):
        _install_toolchain(_lock_dir(), target)
    return target


def _install_toolchain(lock_dir: Path, target: Path) -> None:
    import shutil

    from trunchbull.common.diagnostics import UsageError

    npm = shutil.which("npm")
    if not npm:
        raise UsageError("npm is required once, to install the pinned Node toolchain")
    from trunchbull.node.installer import InstallFailed, install_into

    print("trunchbull: installing the pinned Node toolchain (first use)", file=sys.stderr)
    files = {name: (lock_dir / name).read_bytes() for name in ("package.json", "package-lock.json")}
    try:
        install_into(target, files, [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"])
    except InstallFailed as failed:
        raise UsageError(f"installing the Node toolchain failed:\n{failed.output}") from None


class Toolchain:
    """An installed toolchain directory."""

    __slots__ = ("root",)

    def __init__(self, root: Path):
        self.root = root

    @property
    def node(self) -> Path:
        return (self.root / "node_modules" / ".bin" / "node").resolve()

    @property
    def ai_package(self) -> Path:
        return self.root / "node_modules" / "ai" / "dist" / "index.js"

    def base_env(self) -> dict[str, str]:
        """A minimal, deterministic environment for Node processes."""
        env = {"TRUNCHBULL_TOOLCHAIN": str(self.root), "PATH": str(self.node.parent)}
        for passthrough in ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"):
            if passthrough in os.environ:
                env[passthrough] = os.environ[passthrough]
        return env


_toolchain: Toolchain | None = None


def toolchain() -> Toolchain:
    global _toolchain
    if _toolchain is None:
        _toolchain = Toolchain(toolchain_dir())
    return _toolchain


def start_helper(tc: Toolchain) -> subprocess.Popen:
    """The trusted Node helper (js/compile/helper.mjs), starting up; see node.NodeHelper."""
    # V8's code cache for esbuild's and Babel's JavaScript: ~20 ms less
    # start-up (trusted code only; sandboxed processes may not write it).
    # Graceful: once its input ends it stops esbuild's service and waits for
    # it before exiting (lifetime.py), so no grandchild outlives the command.
    env = {**tc.base_env(), "NODE_COMPILE_CACHE": str(cache_root() / "node-compile-cache")}
    return lifetime.spawn(
        [str(tc.node), str(JS_DIR / "compile/helper.mjs")],
        graceful=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


_early_helper: subprocess.Popen | None = None


def start_helper_early() -> None:
    """Start the helper before the CLI's imports (it needs ~0.1 s to be ready),
    when the toolchain is already installed; else the CLI installs it and
    starts the helper later. take_early_helper() hands the process over."""
    global _toolchain, _early_helper
    root = installed_toolchain_dir()
    if root is not None:
        _toolchain = Toolchain(root)
        _early_helper = start_helper(_toolchain)


def take_early_helper() -> subprocess.Popen | None:
    global _early_helper
    started, _early_helper = _early_helper, None
    return started
