"""The model providers (SPEC §8.1): one table, the single source of truth.
Everything else is derived from it: SPEC parsing and its messages
(model_spec.py), the `--model` help, the AI SDK bundle of a run (the npm
package and factory to bundle, sdk_bundle.py), and how a worker makes the
model (js/run/models.mjs gets the entry's `worker` part and calls what it
names). The key's variable is where the worker reads the secret it scrubs.

Adding a provider whose @ai-sdk package follows the usual factory shape
(`createX({ apiKey, baseURL, fetch })(model)`) is adding one entry here (and
the package to the toolchain's lockfile, third_party/npm)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class BatchLimits:
    """What one batch of the provider's batch API may hold (its documented limits)."""

    requests: int
    bytes: int  # of the requests as sent (each request's JSON body, its tools' schemas included)


@dataclass(frozen=True)
class Provider:
    name: str  # the SPEC prefix: `name` or `name:…`
    form: str  # the SPEC's form, for the `--model` help
    example: str  # a SPEC for messages
    takes_model: bool = False  # `name:MODEL` (else the SPEC is the bare name, or `name:PATH`)
    key_env: str | None = None  # the default variable holding the API key
    needs_key: bool = False
    needs_base_url: bool = False
    takes_path: bool = False  # `name:PATH` of a local file
    file_kind: str = ""  # what that file is, for messages
    file_example: str = ""  # a SPEC naming such a file, for messages
    file_magic: bytes = b""  # how that file starts
    local: bool = False  # the model runs in the run's workers (a native runtime, one generation per worker)
    remote: bool = False  # the model is called over the network: the run mostly waits on it
    seed: bool = True  # its calls take a seed (a judge is sent one: run/judge_options.py)
    # How a worker makes the model (js/run/models.mjs):
    package: str | None = None  # an npm package of the toolchain, bundled with `ai` (sdk_bundle.py) ...
    factory: str | None = None  # ... and its factory: factory({ apiKey, baseURL, fetch, ...options })
    method: str | None = None  # then provider.method(model), or provider(model) when None
    options: dict = field(default_factory=dict)
    module: str | None = None  # or a built-in model: this module of js/run/ ...
    export: str | None = None  # ... and its factory, called with the model spec
    batch: BatchLimits | None = None  # the provider's batch API, through the AI SDK (`run --batch`)

    def worker_entry(self) -> dict:
        """What js/run/models.mjs needs to make the model."""
        if self.module:
            return {"module": self.module, "export": self.export}
        return {"factory": self.factory, "method": self.method, "options": self.options}


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("echo", "echo", "echo", module="model_echo.mjs", export="echoModel"),
        Provider(
            "replay",
            "replay:PATH",
            "replay:responses.jsonl",
            takes_path=True,
            file_kind="responses file",
            file_example="replay:responses.jsonl",
            module="model_replay.mjs",
            export="replayModel",
        ),
        Provider(
            "llamacpp",
            "llamacpp:PATH.gguf",
            "llamacpp:model.gguf",
            takes_path=True,
            file_kind="GGUF model file",
            file_example="llamacpp:models/SmolLM2-135M-Instruct.Q4_1.gguf",
            file_magic=b"GGUF",
            local=True,
            module="model_llamacpp.mjs",
            export="llamacppModel",
        ),
        Provider(
            "openai",
            "openai:MODEL",
            "openai:gpt-4o-mini",
            takes_model=True,
            key_env="OPENAI_API_KEY",
            needs_key=True,
            remote=True,
            package="@ai-sdk/openai",
            factory="createOpenAI",
            # chat completions, the protocol every OpenAI-style server speaks
            # (the provider's default for `openai(model)` is the Responses API)
            method="chat",
            # the Batch API: 50,000 requests and a 200 MB input file per batch (its
            # requests are Responses API calls, /v1/responses)
            batch=BatchLimits(50_000, 200 * 1024 * 1024),
        ),
        Provider(
            "anthropic",
            "anthropic:MODEL",
            "anthropic:claude-sonnet-4-5",
            takes_model=True,
            key_env="ANTHROPIC_API_KEY",
            needs_key=True,
            remote=True,
            seed=False,
            package="@ai-sdk/anthropic",
            factory="createAnthropic",
            batch=BatchLimits(100_000, 256 * 1024 * 1024),  # Message Batches
        ),
        Provider(
            "google",
            "google:MODEL",
            "google:gemini-2.5-flash",
            takes_model=True,
            key_env="GOOGLE_GENERATIVE_AI_API_KEY",
            needs_key=True,
            remote=True,
            package="@ai-sdk/google",
            factory="createGoogleGenerativeAI",
            # batch mode with inline requests: the AI SDK sends a batch below 20 MB inline
            batch=BatchLimits(50_000, 20 * 1000 * 1000),
        ),
        Provider(
            "openai-compatible",
            "openai-compatible:MODEL",
            "openai-compatible:MODEL --base-url URL",
            takes_model=True,
            needs_base_url=True,
            remote=True,
            package="@ai-sdk/openai-compatible",
            factory="createOpenAICompatible",
            options={"name": "openai-compatible", "includeUsage": True},
        ),
    )
}


def model_help() -> str:
    """The `--model` help: every provider's SPEC form."""
    return " | ".join(p.form for p in PROVIDERS.values())


def examples() -> str:
    return ", ".join(p.example for p in PROVIDERS.values())
