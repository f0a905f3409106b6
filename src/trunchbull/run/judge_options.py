"""Which judge answers a run's model-graded cases, and how it is called
(SPEC §4.1), settled before anything is called or written.

* `--judge SPEC` names the judge of every judged case, and given several
  times a panel: every judge grades every judged sample, and the verdict is
  the majority's (run/judge_panel.py); without it, each spec's own `judge`
  (the benchmark's default); a judged case with neither is a usage error
  naming its eval.
* `--judge-base-url URL` and `--judge-api-key-env NAME` are the judge's
  endpoint and key, exactly as `--base-url` and `--api-key-env` are the
  model's (checked the same way: no credential in a URL, a key that must be
  set); a SPEC, a URL or a key that is wrong is a usage error naming the
  judge flags.
* The judge's call settings: temperature 0, and the seed (`--seed`, else 0)
  where the provider takes one; `--judge-max-tokens N` bounds a reply.
* A judge that is the model under test (same provider, model and endpoint)
  is a usage error unless `--allow-self-judge`; run.json and the summary
  then say the run judged itself.

Recorded in run.json (`judge`), without any credential, and compared on
`--resume` like the model's options."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from trunchbull.common.diagnostics import UsageError
from trunchbull.grading.judge_check import judges_needed
from trunchbull.run.model_spec import ModelSpec, parse_model_spec
from trunchbull.run.options import RunOptions
from trunchbull.run.prices import Price, price_for, read_prices_file, recorded_price
from trunchbull.run.providers import PROVIDERS
from trunchbull.run.settings import Filters, RunSettings

DEFAULT_SEED = 0
_FLAGS = re.compile(r"(?<![\w-])--(model|base-url|api-key-env)\b")
_JUDGE_FLAGS = {"model": "--judge", "base-url": "--judge-base-url", "api-key-env": "--judge-api-key-env"}


@dataclass(frozen=True)
class JudgeOptions:
    """What the command line (or, on --resume, run.json) says of the judge."""

    given: tuple[str, ...]  # --judge SPECs; empty: each spec's own judge
    base_url: str | None
    api_key_env: str | None
    allow_self: bool
    max_tokens: int | None = None  # --judge-max-tokens: the most output tokens of one judge reply


@dataclass(frozen=True)
class JudgeModel:
    """One judge, ready to be called."""

    spec: ModelSpec
    settings: dict  # the AI SDK call settings (temperature, seed)
    price: Price | None

    @property
    def text(self) -> str:
        return self.spec.text


@dataclass(frozen=True)
class JudgeSetup:
    """The judges of a run: by SPEC, and which answers a request."""

    options: JudgeOptions
    judges: dict[str, JudgeModel]  # SPEC text → judge, every one a judged case needs
    self_judged: tuple[str, ...]  # the judges that are the model under test

    def panel_for(self, pinned: str | None) -> tuple[JudgeModel, ...]:
        """The judges of a request whose spec pins `pinned` (None: none): the
        --judge panel (one judge or several), else the pinned judge."""
        chosen = self.options.given or ((pinned,) if pinned is not None else ())
        assert chosen and all(text in self.judges for text in chosen)  # judges_needed refused a case without one
        return tuple(self.judges[text] for text in chosen)

    def summary(self) -> list[dict]:
        """summary.json's `judges`: each judge, and whether it is the model under test."""
        return [{"model": text, "selfJudge": text in self.self_judged} for text in self.judges]

    def to_json(self) -> dict:
        """run.json's `judge`."""
        return {
            "models": list(self.judges),
            "given": list(self.options.given),
            "baseUrl": self.options.base_url,
            "apiKeyEnv": self.options.api_key_env,
            "settings": {text: judge.settings for text, judge in self.judges.items()},
            "prices": {
                text: None if judge.price is None else judge.price.to_json() for text, judge in self.judges.items()
            },
            "maxTokens": self.options.max_tokens,
            "allowSelfJudge": self.options.allow_self,
            "selfJudged": list(self.self_judged),
        }


def judge_options(args, previous: dict | None) -> JudgeOptions:
    """The judge options given, or those of the run being resumed; a
    difference from what it recorded is a usage error."""
    given = tuple(args.judge or ())
    if len(set(given)) != len(given):
        raise UsageError(f"--judge {', '.join(given)}: a judge is named twice; a panel's judges are distinct models")
    recorded = (previous or {}).get("judge") or {}
    resuming = previous is not None
    options = JudgeOptions(
        given or tuple(recorded.get("given") or ()) if resuming else given,
        args.judge_base_url if args.judge_base_url is not None else (recorded.get("baseUrl") if resuming else None),
        args.judge_api_key_env
        if args.judge_api_key_env is not None
        else (recorded.get("apiKeyEnv") if resuming else None),
        bool(args.allow_self_judge) or bool(recorded.get("allowSelfJudge")),
        args.judge_max_tokens if args.judge_max_tokens is not None else recorded.get("maxTokens"),
    )
    if options.max_tokens is not None and options.max_tokens < 1:
        raise UsageError(f"--judge-max-tokens takes an integer ≥ 1, got {options.max_tokens}")
    if resuming:
        differences = []
        if given and list(given) != list(recorded.get("given") or []):
            differences.append(
                f"--judge {', '.join(given)} (the run has {', '.join(recorded.get('given') or []) or 'none'})"
            )
        if args.judge_max_tokens is not None and args.judge_max_tokens != recorded.get("maxTokens"):
            differences.append(f"--judge-max-tokens {args.judge_max_tokens} (the run has {recorded.get('maxTokens')})")
        if args.judge_base_url is not None and args.judge_base_url.rstrip("/") != (recorded.get("baseUrl") or ""):
            differences.append("--judge-base-url (the run has " + (recorded.get("baseUrl") or "none") + ")")
        if differences:
            raise UsageError(
                "--resume: the judge differs from the run being resumed (run.json): "
                + "; ".join(differences)
                + ". Re-judging with another judge is a new run directory, which keeps this one's verdicts"
            )
    return options


def _parsed(text: str, options: JudgeOptions, source: str) -> ModelSpec:
    try:
        return parse_model_spec(text, base_url=options.base_url, api_key_env=options.api_key_env)
    except UsageError as err:
        message = _FLAGS.sub(lambda m: _JUDGE_FLAGS[m.group(1)], str(err))
        raise UsageError(f"{message} ({source})" if source else message) from None


def resolve_judges(
    options: JudgeOptions,
    cases: Iterable[dict],
    model: ModelSpec | None,
    seed: int | None,
    prices_file: Path | None,
    previous: dict | None = None,
    evals: Iterable[dict] | None = None,
) -> JudgeSetup | None:
    """The judges the judged cases among `cases` need, parsed and checked
    (None when no case is judged); `model`: the model under test (None for
    `grade`, which has none); `previous`: the run.json of the run being
    resumed (its judges' prices hold unless --prices is given); `evals`: the
    release's eval entries (judges_needed)."""
    needed = judges_needed(cases, options.given, evals, by_eval=model is not None)  # run selects by --eval
    if not needed:
        return None
    judges = judge_models(options, needed, seed, prices_file, previous)
    self_judged = tuple(
        text for text, judge in judges.items() if model is not None and judge.spec.identity() == model.identity()
    )
    if self_judged and not options.allow_self:
        raise UsageError(
            f"the judge {', '.join(self_judged)} is the model under test ({model.text if model else ''}): a model "
            "grading its own outputs is biased towards them. Name another judge with --judge SPEC, or grade "
            "anyway with --allow-self-judge (the run is then marked self-judged)"
        )
    return JudgeSetup(options, judges, self_judged)


def judge_models(
    options: JudgeOptions,
    needed: dict[str, list[str]],
    seed: int | None,
    prices_file: Path | None,
    previous: dict | None = None,
) -> dict[str, JudgeModel]:
    """Each judge `needed` (SPEC → the evals it judges, named in messages
    about a judge an eval pins), parsed and checked, with its call settings
    and price (the one `previous`, a run.json, recorded unless --prices is given)."""
    prices = read_prices_file(prices_file) if prices_file is not None else None
    judges: dict[str, JudgeModel] = {}
    for text, judged_evals in needed.items():
        source = "" if options.given else f"the judge pinned by eval {', '.join(judged_evals[:3])}"
        spec = _parsed(text, options, source)
        settings: dict = {"temperature": 0}
        if PROVIDERS[spec.provider].seed:
            settings["seed"] = DEFAULT_SEED if seed is None else seed
        if options.max_tokens is not None:
            settings["maxOutputTokens"] = options.max_tokens
        recorded = ((previous or {}).get("judge") or {}).get("prices") or {}
        if prices is None and text in recorded:
            price = recorded_price({"price": recorded[text]})
        else:
            price = price_for(text, spec.provider, prices)
        judges[text] = JudgeModel(spec, settings, price)
    return judges


def judge_run_options(judge: JudgeModel, run: RunSettings) -> RunOptions:
    """How the judge's workers are started: its model and call settings, one
    step, and the run's timeouts, retries, concurrency and reply limits."""
    settings = RunSettings(
        temperature=judge.settings["temperature"],
        seed=judge.settings.get("seed"),
        maxTokens=judge.settings.get("maxOutputTokens"),
        maxSteps=1,
        timeout=run.timeout,
        toolTimeout=run.toolTimeout,
        retries=run.retries,
        concurrency=run.concurrency,
        maxResponseBytes=run.maxResponseBytes,
        maxToolResultBytes=run.maxToolResultBytes,
    )
    return RunOptions(judge.spec, settings, Filters(), 1)
