"""The options of a run (SPEC §8): what the command line gives, and, on
--resume, what run.json recorded for everything it does not give. An option
given that differs from the recorded run is a usage error naming each
difference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trunchbull.common.diagnostics import UsageError
from trunchbull.run.base_url import check_base_url
from trunchbull.run.model_spec import ModelSpec, parse_model_spec
from trunchbull.run.providers import PROVIDERS
from trunchbull.run.settings import DEFAULTS, SCHEDULING_ONLY, Filters, RunSettings, check_repeat

# run.json setting → its command-line option (for --resume's comparison) and argparse name
SETTING_FLAGS = {
    "temperature": ("--temperature", "temperature"),
    "maxTokens": ("--max-tokens", "max_tokens"),
    "topP": ("--top-p", "top_p"),
    "seed": ("--seed", "seed"),
    "maxSteps": ("--max-steps", "max_steps"),
    "timeout": ("--timeout", "timeout"),
    "toolTimeout": ("--tool-timeout", "tool_timeout"),
    "retries": ("--retries", "retries"),
    "concurrency": ("-j/--concurrency", "concurrency"),
    "maxResponseBytes": ("--max-response-bytes", "max_response_bytes"),
    "maxToolResultBytes": ("--max-tool-result-bytes", "max_tool_result_bytes"),
}


def option_shown(value: Any) -> str:
    """An option's value as the command line writes it: `0.5`, `300`, `math, code`."""
    if isinstance(value, (tuple, list)):
        return ", ".join(option_shown(item) for item in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


DEFAULT_BATCH_POLL_S = 30.0


@dataclass(frozen=True)
class BatchMode:
    """`--batch`: the model calls go through the provider's batch API (run/batch/)."""

    poll: float = DEFAULT_BATCH_POLL_S  # seconds between two looks at the live batches
    cancel: bool = False  # --cancel-batches: cancel the live batches, record what finished, stop

    def to_json(self) -> dict:
        return {"poll": self.poll}


@dataclass(frozen=True)
class RunOptions:
    spec: ModelSpec
    settings: RunSettings
    filters: Filters
    repeat: int
    batch: BatchMode | None = None
    cache: bool = True  # the response cache: off with --no-cache, which a resumed run keeps


def resolve_options(args, previous: dict | None) -> RunOptions:
    """This run's options; `previous`: the run.json of the run being resumed."""
    differences: list[str] = []

    def pick(flag: str, given, recorded, present: bool):
        if given is None:
            return recorded if present else None
        if present and given != recorded and flag:
            had = f"has {option_shown(recorded)}" if recorded not in (None, ()) else f"was made without {flag}"
            differences.append(f"{flag} {option_shown(given)} (the run {had})")
        return given

    old = previous or {}
    old_settings = old.get("settings") or {}
    old_filters = old.get("filters") or {}
    has = previous is not None
    model = pick("--model", args.model, old.get("model"), has)
    if model is None:
        raise UsageError("--model SPEC is required (e.g. --model echo, --model openai:gpt-4o-mini)")
    # checked before it is compared, so that a difference is shown without what may not be shown
    given_url = check_base_url(args.base_url) if args.base_url is not None else None
    base_url = pick("--base-url", given_url, old.get("baseUrl"), has)
    api_key_env = pick("", args.api_key_env, old.get("apiKeyEnv"), has)
    values: dict[str, Any] = {}
    for name, (flag, arg) in SETTING_FLAGS.items():
        given = getattr(args, arg)
        value = pick(
            flag if name not in SCHEDULING_ONLY else "", given, old_settings.get(name), has and name in old_settings
        )
        values[name] = value if value is not None else DEFAULTS.get(name)
    evals = pick("--eval", tuple(args.eval) if args.eval else None, tuple(old_filters.get("eval") or ()), has)
    cases = pick("--case", tuple(args.case) if args.case else None, tuple(old_filters.get("case") or ()), has)
    limit = pick("--limit", args.limit, old_filters.get("limit"), has)
    repeat = pick("--repeat", args.repeat, old.get("repeat"), has)
    repeat = 1 if repeat is None else repeat
    if differences:
        raise UsageError(
            "--resume: the command line differs from the run being resumed (run.json): "
            + "; ".join(differences)
            + ". Resume with the same options, or start a new run directory"
        )
    spec = parse_model_spec(model, base_url=base_url, api_key_env=api_key_env)
    settings = RunSettings(**{name: values[name] for name in SETTING_FLAGS})
    filters = Filters(tuple(evals or ()), tuple(cases or ()), limit)
    cache = not (getattr(args, "no_cache", False) or old.get("cache") is False)
    return RunOptions(spec, settings, filters, check_repeat(repeat), _batch_mode(args, previous, spec), cache)


def _batch_mode(args, previous: dict | None, spec: ModelSpec) -> BatchMode | None:
    """`--batch` (and on --resume, a batch run's own), checked before anything is called."""
    recorded = (previous or {}).get("batch")
    batch = bool(getattr(args, "batch", False)) or type(recorded) is dict
    poll = getattr(args, "batch_poll", None)
    cancel = bool(getattr(args, "cancel_batches", False))
    if previous is not None and getattr(args, "batch", False) and type(recorded) is not dict:
        raise UsageError(
            "--resume: the command line differs from the run being resumed (run.json): --batch (the run was made "
            "without --batch). Resume with the same options, or start a new run directory"
        )
    if cancel and not getattr(args, "resume", False):
        raise UsageError("--cancel-batches cancels the live batches of a run being resumed: add --resume")
    if not batch:
        if poll is not None or cancel:
            raise UsageError(
                f"{'--batch-poll' if poll is not None else '--cancel-batches'} applies to --batch runs only"
            )
        return None
    if PROVIDERS[spec.provider].batch is None:
        able = ", ".join(name for name, p in PROVIDERS.items() if p.batch is not None)
        raise UsageError(f"--batch: --model {spec.text} has no batch API (batch mode works with {able})")
    if poll is not None and not poll > 0:
        raise UsageError(f"--batch-poll takes a number of seconds > 0, got {poll:g}")
    if poll is None and type(recorded) is dict and isinstance(recorded.get("poll"), (int, float)):
        poll = float(recorded["poll"])
    return BatchMode(DEFAULT_BATCH_POLL_S if poll is None else poll, cancel)
