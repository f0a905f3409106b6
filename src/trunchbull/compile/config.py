"""Benchmark and repository roots, and the static config (SPEC §3.1)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from trunchbull.common.diagnostics import Diagnostics, UsageError
from trunchbull.common.ids import json_type, suggest
from trunchbull.common.paths import MODULE_SUFFIXES, rel_posix, resolve_inside
from trunchbull.common.userfiles import (
    MISSING,
    NOT_REGULAR_CODE,
    UNREADABLE,
    UNREADABLE_CODE,
    FileProblem,
    display,
    exists,
    name_problem,
    os_problem,
    probe,
    read_file,
)
from trunchbull.node.sandbox import NodeHelper

CONFIG_NAMES = tuple(f"benchmark.config{suffix}" for suffix in MODULE_SUFFIXES)
CONFIG_KEYS = ("protocolVersion", "title", "version", "evals", "tools")
VERSION_MAX = 64


@dataclass
class BenchmarkConfig:
    root: Path  # absolute benchmark root
    repo_root: Path  # nearest ancestor with .git or pants.toml
    config_file: str | None  # root-relative name, when a config exists
    title: str
    version: str | None = None
    evals: list[str] | None = None  # root-relative module paths, when listed
    tools: list[str] | None = None
    locations: dict[str, dict] = field(default_factory=dict)

    def where(self, key: str) -> dict:
        loc = self.locations.get(key, {})
        return {"file": self.config_file, "line": loc.get("line"), "col": loc.get("col")}


def locate_root(path: Path) -> tuple[Path, Path | None]:
    """The benchmark root and its config file (if any) for a user-given path.
    A config that is there but cannot be read is returned too: read_config
    says why."""
    problem = name_problem(str(path))
    if problem:
        raise UsageError(f"the benchmark path {display(str(path))} {problem}")
    path = path.absolute()
    try:
        os.fsencode(str(path)).decode("utf-8")
    except UnicodeError:
        raise UsageError(f"the benchmark path {display(str(path))} is not valid UTF-8; rename it") from None
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError) as err:
        raise UsageError(f"{display(str(path))} {os_problem(err)}") from None
    if not stat.S_ISDIR(mode):
        if path.name not in CONFIG_NAMES:
            raise UsageError(f"{path} is not a benchmark directory or benchmark.config file")
        return path.parent, path
    configs = [path / name for name in CONFIG_NAMES if exists(path / name)]
    return path, (configs[0] if configs else None)


def find_repo_root(root: Path) -> Path:
    for candidate in (root, *root.parents):
        if exists(candidate / ".git") or exists(candidate / "pants.toml"):
            return candidate
    return root


def report_file_problem(
    diags: Diagnostics,
    problem: FileProblem,
    code: str,
    *,
    what: str = "",
    hint: str | None = None,
    file: str | None = None,
    line: int | None = None,
    col: int | None = None,
) -> None:
    """A FileProblem as a diagnostic `what` + the problem: `code` for the
    benchmark's own mistakes, path-unreadable (exit 2) when the environment
    keeps the file from being read."""
    if problem.kind == UNREADABLE:
        code, hint = UNREADABLE_CODE, "check the file's permissions (and the number of open files allowed)"
    diags.error(code, f"{what}{problem}", file=file, line=line, col=col, hint=hint)


def read_config(root: Path, config_path: Path | None, helper: NodeHelper, diags: Diagnostics) -> BenchmarkConfig:
    config = BenchmarkConfig(root=root, repo_root=find_repo_root(root), config_file=None, title=root.name)
    if config_path is None:
        return config
    config.config_file = config_path.name
    others = [name for name in CONFIG_NAMES if name != config_path.name and exists(root / name)]
    for other in others:
        diags.error(
            "config-multiple",
            f"two config modules: {config_path.name} and {other}",
            file=other,
            hint="keep exactly one benchmark.config file",
        )
    try:
        source = read_file(config_path).decode("utf-8")
    except FileProblem as problem:
        report_file_problem(
            diags,
            problem,
            NOT_REGULAR_CODE,
            what="the config ",
            file=config.config_file,
            hint="benchmark.config must be a regular file",
        )
        return config
    except UnicodeDecodeError as err:
        diags.error(
            "config-syntax",
            f"the config is not valid UTF-8 (byte {err.start})",
            file=config.config_file,
            hint="save benchmark.config as UTF-8",
        )
        return config
    response = helper.request({"op": "config", "source": source})
    for reported in response.get("errors", []):
        diags.error(
            reported["code"],
            reported["message"],
            file=config.config_file,
            line=reported.get("line"),
            col=reported.get("col"),
            hint=reported.get("hint"),
        )
    value = response.get("value")
    if not isinstance(value, dict):
        return config
    config.locations = response.get("locations", {})
    _check_config_value(config, value, diags)
    return config


def _check_config_value(config: BenchmarkConfig, value: dict, diags: Diagnostics) -> None:
    for key in value:
        if key not in CONFIG_KEYS:
            near = suggest(key, list(CONFIG_KEYS))
            diags.error(
                "config-unknown-key",
                f"unknown config key {key!r}",
                **config.where(key),
                hint=(f"did you mean {near!r}? " if near else "") + "allowed keys: " + ", ".join(CONFIG_KEYS),
            )
    if "protocolVersion" not in value:
        diags.error(
            "config-protocol-version",
            "the config must set protocolVersion: 1",
            file=config.config_file,
            hint="add `protocolVersion: 1`",
        )
    elif value["protocolVersion"] != 1 or isinstance(value["protocolVersion"], bool):
        diags.error(
            "config-protocol-version",
            f"protocolVersion must be 1, found {value['protocolVersion']!r}",
            **config.where("protocolVersion"),
            hint="this compiler reads protocol version 1",
        )
    if "title" in value:
        if isinstance(value["title"], str) and value["title"].strip():
            config.title = value["title"]
        else:
            diags.error(
                "config-title",
                "title must be a non-empty string",
                **config.where("title"),
                hint="remove title to use the benchmark directory's name",
            )
    if "version" in value:
        version = value["version"]
        if isinstance(version, str) and version.strip() and len(version) <= VERSION_MAX:
            config.version = version
        else:
            diags.error(
                "config-version",
                f"version must be a non-empty string of at most {VERSION_MAX} characters",
                **config.where("version"),
                hint='for example version: "1.0.0"',
            )
    if "evals" in value:
        config.evals = _check_module_list(config, "evals", value["evals"], diags, min_items=1)
    if "tools" in value:
        config.tools = _check_module_list(config, "tools", value["tools"], diags, min_items=0)


def _check_module_list(
    config: BenchmarkConfig, key: str, items: object, diags: Diagnostics, min_items: int
) -> list[str]:
    if not isinstance(items, list):
        diags.error(
            "config-paths",
            f"{key} must be an array of module paths, found {json_type(items)}",
            **config.where(key),
            hint=f'for example {key}: ["{key}/first.ts"]',
        )
        return []
    if len(items) < min_items and not any(d.code == "config-not-static" for d in diags.items):
        diags.error(
            "config-evals-empty",
            f"an explicit {key} array must list at least one module",
            **config.where(key),
            hint=f"list your eval modules, or remove {key} to discover them under {key}/",
        )
    paths: list[str] = []
    for i, item in enumerate(items):
        where = config.where(f"{key}[{i}]")
        resolved, problem = (
            resolve_inside(config.root, item, config.root) if isinstance(item, str) else (None, "must be a string path")
        )
        if problem:
            diags.error(
                "config-path",
                f"{key}[{i}] {problem}",
                **where,
                hint="paths are POSIX, relative to the directory of benchmark.config",
            )
            continue
        assert resolved is not None
        rel = rel_posix(resolved, config.root)
        _, file_problem = probe(resolved)
        if not rel.endswith(MODULE_SUFFIXES):
            diags.error(
                "config-path",
                f"{key}[{i}] {display(item)} is not a .ts, .mts, .js or .mjs module",
                **where,
                hint="list JavaScript or TypeScript modules; data files are named by the eval modules",
            )
        elif file_problem and file_problem.kind == MISSING:
            diags.error(
                "config-path-missing",
                f"{key}[{i}] {display(item)} {file_problem}",
                **where,
                hint=f"paths are relative to {config.config_file}'s directory",
            )
        elif file_problem:
            report_file_problem(
                diags,
                file_problem,
                "config-path",
                what=f"{key}[{i}] {display(item)} ",
                hint="list regular module files",
                **where,
            )
        elif rel in paths:
            diags.error(
                "config-path-duplicate",
                f"{key}[{i}] {display(item)} is listed twice",
                **where,
                hint="list each module once",
            )
        else:
            paths.append(rel)
    return paths
