"""The compile stages as file-in/file-out processes, for build systems that
cache and sandbox each one (the Pants rules run exactly these):

  config          ROOT → config.json          static config + discovery
  bundle-inspect  ROOT, one module → report.json + <sha>.mjs
  transform-run   ROOT, report.json, run 1|2 → run.json     one transformer run
  expand          ROOT, report.json [, run records] → expansion.json
  assemble        ROOT, config.json, reports, expansions → release dir

Each prints diagnostics like the CLI and exits 0 (ok), 1 (the benchmark has
errors; for assemble nothing is written) or 2 (usage/environment).
`trunchbull build` composes the same functions in one process."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import orjson

from trunchbull.common import lifetime
from trunchbull.common.diagnostics import Diagnostic, Diagnostics, UsageError, render_text, report_internal_error
from trunchbull.compile.cases.fields import Where
from trunchbull.compile.assembly import assemble
from trunchbull.compile.building import root_prefix
from trunchbull.compile.config import BenchmarkConfig, find_repo_root
from trunchbull.compile.deps import find_dependencies
from trunchbull.node.dependencies import Dependencies
from trunchbull.compile.evals import EvalCompiler
from trunchbull.compile.modules import ModuleReport, bundle_modules, bundle_timeout_diagnostic, inspect_modules
from trunchbull.compile.discovery import Entrypoints
from trunchbull.compile.expansion import Expansion, expand_module
from trunchbull.compile.pipeline import load_config
from trunchbull.compile.transformer.expand import prepare_transformer
from trunchbull.node.sandbox import HelperTimeout, NodeHelper
from trunchbull.node.toolchain import toolchain


def _write_json(path: Path, value: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(value, option=orjson.OPT_SORT_KEYS) + b"\n")


def _read_json(path: Path) -> dict:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as err:
        raise UsageError(f"cannot read {path}: {err}") from None


def _report(diagnostics: list[Diagnostic], root_arg: Path) -> int:
    """Print the diagnostics as `trunchbull build ROOT` does: paths under ROOT as given (run from
    the repository root, as Pants runs the steps, they are repository-relative)."""
    diagnostics = sorted(dict.fromkeys(diagnostics), key=Diagnostic.sort_key)
    if diagnostics:
        print(render_text(diagnostics, root_prefix(root_arg)), file=sys.stderr)
    return 1 if any(d.severity == "error" for d in diagnostics) else 0


def config_to_json(config: BenchmarkConfig, entries: Entrypoints, deps: Dependencies | None) -> dict:
    return {
        "configFile": config.config_file,
        "title": config.title,
        "version": config.version,
        "evals": entries.evals,
        "tools": entries.tools,
        "evalsListed": entries.evals_listed,
        "dependencies": [
            p.relative_to(config.root).as_posix() if p.is_relative_to(config.root) else str(p) for p in deps.files()
        ]
        if deps
        else [],
    }


def config_from_json(data: dict, root: Path, repo_root: Path) -> tuple[BenchmarkConfig, Entrypoints]:
    config = BenchmarkConfig(
        root=root, repo_root=repo_root, config_file=data["configFile"], title=data["title"], version=data["version"]
    )
    return config, Entrypoints(data["evals"], data["tools"], data["evalsListed"])


def step_config(args) -> int:
    with NodeHelper(toolchain()) as helper:
        config, entries, diags = load_config(args.root, helper)
    if args.repo_root:
        config.repo_root = args.repo_root.absolute()
    deps = find_dependencies(config.root, config.repo_root)
    _write_json(args.out, {**config_to_json(config, entries, deps), "diagnostics": [d.to_json() for d in diags.items]})
    return _report(diags.items, args.root)


def step_bundle_inspect(args) -> int:
    tc = toolchain()
    root = args.root.absolute()
    bundle_dir = args.bundle_dir.absolute()
    with NodeHelper(tc) as helper:
        try:
            [report] = bundle_modules(
                helper,
                root,
                [(args.module, args.kind)],
                bundle_dir,
                repo_root=args.repo_root.absolute() if args.repo_root else find_repo_root(root),
            )
        except HelperTimeout:
            report = ModuleReport(args.module, args.kind, diagnostics=[bundle_timeout_diagnostic(args.module)])
    read_paths = [root, bundle_dir]
    if args.deps_dir:  # its node_modules may be a link to the installed tree: allow both
        read_paths += [
            args.deps_dir.absolute(),
            *[p for p in [args.deps_dir.absolute() / "node_modules"] if p.exists()],
        ]
    inspect_modules([report], tc=tc, read_paths=read_paths)
    data = report.to_json()
    if report.bundle_file:
        out_dir = args.out.absolute().parent
        out_dir.mkdir(parents=True, exist_ok=True)
        target = out_dir / report.bundle_file.name
        if report.bundle_file != target:
            shutil.copyfile(report.bundle_file, target)
        data["bundleFile"] = target.name
    _write_json(args.out, data)
    return 0  # module problems are judged at assembly, where helpers and transformers are known


def step_transform_run(args) -> int:
    """One of a transformer's two runs (variant 1 or 2), alone in its process,
    so a build system can sandbox and cache each run separately."""
    root = args.root.absolute()
    report = ModuleReport.from_json(_read_json(args.report), args.report.absolute().parent)
    value = ((report.inspection or {}).get("default") or {}).get("value")
    spec = value.get("cases") if isinstance(value, dict) else None
    record: dict = {"variant": args.run, "skipped": True}
    stdout = b""
    if isinstance(spec, dict):
        compiler = EvalCompiler(report, root, Diagnostics(), args.deps_dir.absolute() if args.deps_dir else None)
        run = prepare_transformer(compiler, spec, Where(report.path, path="cases"))
        if run is not None:  # else expand reports why
            record, stdout = run.record_one(args.run - 1)
    record["stdoutFile"] = args.out.name + ".stdout"
    _write_json(args.out, record)
    (args.out.parent / record["stdoutFile"]).write_bytes(stdout)
    return 0


def _load_run(path: Path) -> dict:
    record = _read_json(path)
    record["stdout"] = (path.parent / record["stdoutFile"]).read_bytes()
    return record


def step_expand(args) -> int:
    root = args.root.absolute()
    report = ModuleReport.from_json(_read_json(args.report), args.report.absolute().parent)
    runs = [_load_run(p) for p in args.transform_run]
    if runs and len(runs) != 2:
        raise UsageError("give --transform-run twice (the records of run 1 and run 2), or not at all")
    runs.sort(key=lambda r: r["variant"])
    recorded = None if not runs or any(r.get("skipped") for r in runs) else runs
    expansion = expand_module(report, root, args.deps_dir.absolute() if args.deps_dir else None, recorded)
    _write_json(args.out, expansion.to_json())
    return 0


def step_assemble(args) -> int:
    root = args.root.absolute()
    repo_root = (args.repo_root or args.root).absolute()
    config_data = _read_json(args.config)
    config, entries = config_from_json(config_data, root, repo_root)
    reports = [ModuleReport.from_json(_read_json(p), p.absolute().parent) for p in args.report]
    expansions = [Expansion.from_json(_read_json(p)) for p in args.expansion]
    order = {path: i for i, path in enumerate(entries.evals + entries.tools)}
    reports.sort(key=lambda r: order.get(r.path, len(order)))
    expansions.sort(key=lambda e: order.get(e.path, len(order)))
    deps = find_dependencies(root, repo_root)
    diags = Diagnostics([Diagnostic.from_json(d) for d in config_data.get("diagnostics", [])])
    release, _ = assemble(config, entries, deps, reports, expansions, diags)
    code = _report(diags.items, args.root)
    if release is None:
        return code or 1
    release.write(args.out)
    if args.tar:
        release.write_tar(args.out.with_name(args.out.name + ".tar"))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m trunchbull.compile.steps",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    steps = parser.add_subparsers(dest="step", required=True)

    config = steps.add_parser("config", help="read the static config and discover entrypoints")
    config.add_argument("root", type=Path)
    config.add_argument("--repo-root", type=Path, help="monorepo root (where package.json lookup stops)")
    config.add_argument("--out", type=Path, required=True)

    bundle = steps.add_parser("bundle-inspect", help="bundle one module with esbuild and inspect its exports")
    bundle.add_argument("root", type=Path)
    bundle.add_argument("--module", required=True, help="root-relative module path")
    bundle.add_argument("--kind", choices=("eval", "tool"), required=True)
    bundle.add_argument("--repo-root", type=Path, help="monorepo root: local imports must stay inside it")
    bundle.add_argument(
        "--bundle-dir",
        type=Path,
        required=True,
        help="where the bundle is imported from; its node_modules ancestry resolves package imports",
    )
    bundle.add_argument(
        "--deps-dir", type=Path, help="directory holding the installed node_modules (readable in the sandbox)"
    )
    bundle.add_argument("--out", type=Path, required=True, help="report.json; the bundle is copied beside it")

    expand = steps.add_parser("expand", help="validate one eval module's export and expand its cases")
    expand.add_argument("root", type=Path)
    expand.add_argument("--report", type=Path, required=True)
    expand.add_argument("--deps-dir", type=Path, help="directory holding the installed node_modules (for transformers)")
    expand.add_argument(
        "--transform-run",
        type=Path,
        action="append",
        default=[],
        help="a transform-run record (give both runs); without them expand runs the transformer itself",
    )

    transform = steps.add_parser("transform-run", help="one of a transformer's two runs, in its own varied sandbox")
    transform.add_argument("root", type=Path)
    transform.add_argument("--report", type=Path, required=True, help="the eval module's report.json")
    transform.add_argument("--run", type=int, choices=(1, 2), required=True)
    transform.add_argument("--deps-dir", type=Path, help="directory holding the installed node_modules")
    transform.add_argument("--out", type=Path, required=True, help="run.json; the run's output is written beside it")
    expand.add_argument("--out", type=Path, required=True)

    assemble_ = steps.add_parser("assemble", help="release-wide checks; write the release")
    assemble_.add_argument("root", type=Path)
    assemble_.add_argument("--repo-root", type=Path)
    assemble_.add_argument("--config", type=Path, required=True)
    assemble_.add_argument("--report", type=Path, action="append", default=[])
    assemble_.add_argument("--expansion", type=Path, action="append", default=[])
    assemble_.add_argument("--out", type=Path, required=True)
    assemble_.add_argument("--tar", action="store_true")
    return parser


STEPS = {
    "config": step_config,
    "bundle-inspect": step_bundle_inspect,
    "transform-run": step_transform_run,
    "expand": step_expand,
    "assemble": step_assemble,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    lifetime.handle_signals()
    try:
        return STEPS[args.step](args)
    except UsageError as err:
        print(f"trunchbull: error: {err}", file=sys.stderr)
        return 2
    except (lifetime.Interrupted, KeyboardInterrupt):
        return 128 + (lifetime.interrupted() or 2)
    except Exception as err:  # noqa: BLE001 - a bug must still end in one clear line
        return report_internal_error(err)
    finally:
        lifetime.shutdown()  # no process outlives the step


if __name__ == "__main__":
    raise SystemExit(main())
