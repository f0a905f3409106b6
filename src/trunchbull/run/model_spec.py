"""Model SPECs (SPEC §8.1) of the providers in providers.py, parsed and
checked before anything is called or written: an unknown provider, a
malformed SPEC, a missing credential or base URL, a file that is not what the
provider reads, or a platform a local model cannot run on is a usage error."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from trunchbull.common.diagnostics import UsageError
from trunchbull.common.ids import suggest
from trunchbull.run.base_url import check_base_url
from trunchbull.run.providers import PROVIDERS, Provider, examples


ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class ModelSpec:
    text: str  # as given on the command line (recorded in run.json)
    provider: str
    model: str | None
    base_url: str | None
    api_key_env: str | None  # the variable the key is read from, when one is used
    path: Path | None = None  # replay: the responses file; llamacpp: the GGUF file

    @property
    def local(self) -> bool:
        """The model runs in the run's workers (see run/local_runtime.py)."""
        return PROVIDERS[self.provider].local

    @property
    def remote(self) -> bool:
        """The model is called over the network (the run's cores mostly wait on it)."""
        return PROVIDERS[self.provider].remote

    @property
    def secret(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def for_worker(self) -> dict:
        """What the worker needs to make the model (the key itself is passed
        in the worker's environment, never in a message)."""
        return {
            "provider": self.provider,
            "make": PROVIDERS[self.provider].worker_entry(),
            "model": self.model,
            "baseUrl": self.base_url,
            "apiKeyEnv": self.api_key_env,
            "path": str(self.path) if self.path else None,
        }

    def worker_env(self) -> dict[str, str]:
        secret = self.secret
        return {self.api_key_env: secret} if self.api_key_env and secret else {}

    def read_paths(self) -> list[Path]:
        return [self.path] if self.path else []

    def identity(self) -> dict:
        """What identifies the model in the response cache: the file's content
        for replay and llamacpp (its SHA-256, not its path), else provider,
        model and base URL."""
        model = self.model
        if self.path is not None:
            model = "sha256:" + file_sha256(self.path)
        return {"provider": self.provider, "model": model, "baseUrl": self.base_url}


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _check_file(provider: Provider, text: str, rest: str) -> Path:
    path = Path(rest).absolute()
    if not path.is_file():
        raise UsageError(
            f"--model {text!r}: {rest} is not a file (the {provider.file_kind}, e.g. " f"{provider.file_example})"
        )
    try:
        with open(path, "rb") as f:
            head = f.read(len(provider.file_magic))
    except OSError as err:
        raise UsageError(f"--model {text!r}: cannot read {rest}: {err.strerror or err}") from None
    if head != provider.file_magic:
        raise UsageError(
            f"--model {text!r}: {rest} is not a {provider.file_kind} (it does not start with "
            f"{provider.file_magic.decode()!r})"
        )
    return path


def parse_model_spec(text: str, *, base_url: str | None = None, api_key_env: str | None = None) -> ModelSpec:
    name, sep, rest = text.partition(":")
    provider = PROVIDERS.get(name)
    if provider is None:
        near = suggest(name, list(PROVIDERS))
        hint = f" (did you mean {near!r}?)" if near else ""
        raise UsageError(
            f"--model {text!r}: unknown provider {name!r}{hint}; providers: {', '.join(PROVIDERS)}. "
            f"Examples: {examples()}"
        )
    if provider.takes_model and not rest.strip():
        raise UsageError(f"--model {text!r}: name the model after the colon, e.g. {name}:MODEL")
    if not provider.takes_model and not provider.takes_path and sep:
        raise UsageError(f"--model {text!r}: {name} takes no model name; use --model {name}")
    if provider.takes_path and not rest:
        raise UsageError(f"--model {text!r}: name the {provider.file_kind}, e.g. {provider.file_example}")
    if api_key_env is not None and not ENV_NAME.match(api_key_env):
        raise UsageError(f"--api-key-env {api_key_env!r} is not an environment variable name")
    if base_url is not None:
        base_url = check_base_url(base_url)
    if provider.needs_base_url and base_url is None:
        raise UsageError(
            f"--model {text!r}: {name} needs --base-url URL (the server's OpenAI-compatible endpoint, "
            "e.g. http://127.0.0.1:8080/v1)"
        )
    if base_url is not None and not (provider.takes_model):
        raise UsageError(f"--base-url does not apply to --model {name}")
    key_env = api_key_env or provider.key_env
    if key_env and provider.takes_model:
        if not os.environ.get(key_env):
            if api_key_env or provider.needs_key:
                raise UsageError(
                    f"--model {text!r} needs an API key: the environment variable {key_env} is not set"
                    + ("" if api_key_env else " (or name another variable with --api-key-env NAME)")
                )
            key_env = None
    elif api_key_env:
        raise UsageError(f"--api-key-env does not apply to --model {name}")
    path = _check_file(provider, text, rest) if provider.takes_path else None
    if provider.local:
        from trunchbull.run.local_runtime import check_platform

        check_platform()
    return ModelSpec(
        text, name, rest if provider.takes_model else None, base_url, key_env if provider.takes_model else None, path
    )
