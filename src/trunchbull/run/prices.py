"""Model prices (SPEC §8.7): USD per million tokens of input, output and
cached input, from a prices file the user gives (`--prices FILE`, TOML or
JSON: model SPEC → {input, output, cachedInput}) or the small default table
below (list prices of hosted models, dated; a file overrides it entry by
entry). The built-in and local models (echo, replay, llamacpp) cost nothing.
A model with no price has an unknown cost: null, never 0."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from trunchbull.common.diagnostics import UsageError
from trunchbull.common.ids import suggest

FREE_PROVIDERS = ("echo", "replay", "llamacpp")
KEYS = ("input", "output", "cachedInput", "batchInput", "batchOutput", "batchCachedInput")
# The batch APIs of OpenAI, Anthropic and Google bill half the live price: a price without
# batch rates gets these shares of its live ones.
BATCH_SHARE = 0.5


@dataclass(frozen=True)
class Price:
    """USD per million tokens; `cached_input` None: cached input is billed as input. The batch
    rates (`run --batch`), None: BATCH_SHARE of the live rate."""

    input: float
    output: float
    cached_input: float | None = None
    source: str = "default"
    batch_input: float | None = None
    batch_output: float | None = None
    batch_cached_input: float | None = None

    def rates(self, batch: bool = False) -> tuple[float, float, float]:
        """(input, output, cached input) USD per million tokens, live or in a batch."""
        cached = self.input if self.cached_input is None else self.cached_input
        if not batch:
            return self.input, self.output, cached
        batch_in = self.input * BATCH_SHARE if self.batch_input is None else self.batch_input
        batch_out = self.output * BATCH_SHARE if self.batch_output is None else self.batch_output
        if self.batch_cached_input is not None:
            batch_cached = self.batch_cached_input
        else:  # cached input billed as input (the batch rate), or its own rate's share
            batch_cached = batch_in if self.cached_input is None else self.cached_input * BATCH_SHARE
        return batch_in, batch_out, batch_cached

    def per_token(self, batch: bool = False) -> dict:
        tokens_in, tokens_out, cached = self.rates(batch)
        return {"input": tokens_in / 1e6, "output": tokens_out / 1e6, "cachedInput": cached / 1e6}

    def to_json(self) -> dict:
        batch_in, batch_out, batch_cached = self.rates(batch=True)
        return {
            "input": self.input,
            "output": self.output,
            "cachedInput": self.cached_input,
            "batchInput": batch_in,
            "batchOutput": batch_out,
            "batchCachedInput": batch_cached,
            "source": self.source,
        }


# The providers' published list prices of 2025-06 (check them before relying on them): live
# rates, and the batch APIs' rates (half of each: OpenAI's Batch API, Anthropic's Message Batches,
# Gemini's batch mode).
DEFAULT_PRICES: dict[str, Price] = {
    "openai:gpt-4o": Price(2.50, 10.00, 1.25, batch_input=1.25, batch_output=5, batch_cached_input=0.625),
    "openai:gpt-4o-mini": Price(0.15, 0.60, 0.075, batch_input=0.075, batch_output=0.3, batch_cached_input=0.0375),
    "openai:gpt-4.1": Price(2.00, 8.00, 0.50, batch_input=1, batch_output=4, batch_cached_input=0.25),
    "openai:gpt-4.1-mini": Price(0.40, 1.60, 0.10, batch_input=0.2, batch_output=0.8, batch_cached_input=0.05),
    "openai:gpt-4.1-nano": Price(0.10, 0.40, 0.025, batch_input=0.05, batch_output=0.2, batch_cached_input=0.0125),
    "openai:o4-mini": Price(1.10, 4.40, 0.275, batch_input=0.55, batch_output=2.2, batch_cached_input=0.1375),
    "anthropic:claude-3-5-haiku-latest": Price(
        0.80, 4.00, 0.08, batch_input=0.4, batch_output=2, batch_cached_input=0.04
    ),
    "anthropic:claude-sonnet-4-0": Price(3.00, 15.00, 0.30, batch_input=1.5, batch_output=7.5, batch_cached_input=0.15),
    "anthropic:claude-opus-4-0": Price(15.00, 75.00, 1.50, batch_input=7.5, batch_output=37.5, batch_cached_input=0.75),
    "google:gemini-2.0-flash": Price(0.10, 0.40, 0.025, batch_input=0.05, batch_output=0.2, batch_cached_input=0.0125),
    "google:gemini-2.5-flash": Price(0.30, 2.50, 0.075, batch_input=0.15, batch_output=1.25, batch_cached_input=0.0375),
    "google:gemini-2.5-pro": Price(1.25, 10.00, 0.31, batch_input=0.625, batch_output=5, batch_cached_input=0.155),
}


def as_json(value: object) -> str:
    """A value of the prices file as JSON writes it (`null`, `true`, `"1.5"`), not as Python would."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _number(value: object, where: str) -> float:
    if type(value) not in (int, float) or value < 0:  # type: ignore[operator]
        raise UsageError(f"{where}: a price is a number of USD per million tokens, at least 0 (got {as_json(value)})")
    return float(value)  # type: ignore[arg-type]


def read_prices_file(path: Path) -> dict[str, Price]:
    """model SPEC → Price, from TOML (`["openai:gpt-4o"]` tables) or JSON."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise UsageError(f"--prices {path}: cannot be read ({err.strerror or err})") from None
    try:
        table = json.loads(data) if path.suffix.lower() == ".json" else tomllib.loads(data.decode())
    except (ValueError, UnicodeDecodeError) as err:
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise UsageError(f"--prices {path}: not valid {kind} ({err})") from None
    if type(table) is not dict:
        raise UsageError(f"--prices {path}: expected a table of model SPEC → {{input, output, cachedInput}}")
    prices = {}
    for model, entry in table.items():
        where = f"--prices {path}: {model!r}"
        if type(entry) is not dict:
            raise UsageError(f"{where}: expected {{input = …, output = …}} in USD per million tokens")
        for key in entry:
            if key not in KEYS:
                near = suggest(key, list(KEYS))
                raise UsageError(f"{where}: unknown key {key!r}" + (f" (did you mean {near!r}?)" if near else ""))
        if "input" not in entry or "output" not in entry:
            raise UsageError(f"{where}: needs both `input` and `output` (USD per million tokens)")
        optional = {key: None if entry.get(key) is None else _number(entry[key], where) for key in KEYS[2:]}
        prices[model] = Price(
            _number(entry["input"], where),
            _number(entry["output"], where),
            optional["cachedInput"],
            source=str(path),
            batch_input=optional["batchInput"],
            batch_output=optional["batchOutput"],
            batch_cached_input=optional["batchCachedInput"],
        )
    return prices


def price_for(model: str, provider: str, file_prices: dict[str, Price] | None) -> Price | None:
    """The price of `model` (its SPEC text): the file's, else the default
    table's, else free for built-in and local models, else None (unknown)."""
    if file_prices and model in file_prices:
        return file_prices[model]
    if model in DEFAULT_PRICES:
        return DEFAULT_PRICES[model]
    if provider in FREE_PROVIDERS:
        return Price(0.0, 0.0, 0.0, source="free (built-in or local model)")
    return None


def recorded_price(meta: dict | None) -> Price | None:
    """The price a run being resumed recorded in run.json."""
    entry = (meta or {}).get("price")
    if type(entry) is not dict:
        return None

    def optional(key: str) -> float | None:
        return None if entry.get(key) is None else float(entry[key])

    try:
        return Price(
            float(entry["input"]),
            float(entry["output"]),
            optional("cachedInput"),
            str(entry.get("source") or "run.json"),
            optional("batchInput"),
            optional("batchOutput"),
            optional("batchCachedInput"),
        )
    except (KeyError, TypeError, ValueError):
        return None


def run_price(prices_file: Path | None, previous: dict | None, model: str, provider: str) -> Price | None:
    """This run's price: from --prices, else what the resumed run recorded, else the defaults."""
    if prices_file is not None:
        return price_for(model, provider, read_prices_file(prices_file))
    if previous is not None and previous.get("price") is not None:
        return recorded_price(previous)
    return price_for(model, provider, None)
