"""--base-url: a query string reaches the server after the provider's path,
and credentials in the URL are refused before anything is called, shown or
written (run/base_url.py, js/run/base_url.mjs)."""

from __future__ import annotations

import orjson
import pytest

from tests.run.conftest import read_jsonl

QUERY = "api-version=2024-06-01&region=eu%20west"


@pytest.mark.parametrize(
    "provider,env,path",
    [
        ("openai-compatible", None, "/v1/chat/completions"),
        ("anthropic", "ANTHROPIC_API_KEY", "/v1/messages"),
        ("google", "GOOGLE_GENERATIVE_AI_API_KEY", "/v1/models/test-model:generateContent"),
    ],
)
def test_a_query_string_follows_the_providers_path(built, server, cli, tmp_path, provider, env, path):
    release = built("agent")
    out = tmp_path / "run"
    run = cli(
        "run",
        release,
        "--model",
        f"{provider}:test-model",
        "--base-url",
        f"{server.url}/?{QUERY}",  # a trailing slash on the path is dropped, the query kept
        "-o",
        out,
        "--case",
        "plain.one",
        env={env: "sk-test"} if env else None,
    )
    assert run.code == 0, run.stderr
    (request,) = server.received()
    assert (request.path, request.query) == (path, QUERY)
    assert orjson.loads((out / "run.json").read_bytes())["baseUrl"] == f"{server.url}?{QUERY}"
    assert read_jsonl(out / "responses.jsonl")[0]["output"] == "[plain-one] please echo one"
    resumed = cli(
        "run",
        release,
        "-o",
        out,
        "--resume",
        "--base-url",
        f"{server.url}/?{QUERY}",
        env={env: "sk-test"} if env else None,
    )
    assert resumed.code == 0, resumed.stderr  # the same base URL as recorded, once normalized


@pytest.mark.parametrize(
    "base_url,secret,message",
    [
        ("http://user:PASS-1234@{host}/v1", "PASS-1234", "the URL holds credentials (user:password@)"),
        ("http://only-a-user@{host}/v1", "only-a-user", "the URL holds credentials"),
        ("http://{host}/v1?key=SEKRIT-99", "SEKRIT-99", "the query parameter key looks like a credential"),
        (
            "http://{host}/v1?api-version=1&X-Api-Key=SEKRIT-98&access_token=SEKRIT-97",
            "SEKRIT-9",
            "the query parameter X-Api-Key, access_token looks like a credential",
        ),
        ("http://{host}/v1#SEKRIT-96", "SEKRIT-96", "a URL's #fragment is never sent"),
        ("ftp://user:PASS-95@{host}/v1", "PASS-95", "holds credentials"),
    ],
)
def test_credentials_in_a_base_url_are_refused_and_written_nowhere(
    built, server, cli, cache_dir, tmp_path, base_url, secret, message
):
    release = built("agent")
    out = tmp_path / "run"
    host = server.url.split("/")[2]
    run = cli("run", release, "--model", "openai-compatible:m", "--base-url", base_url.format(host=host), "-o", out)
    assert run.code == 2, run.stderr
    assert message in run.stderr and "Traceback" not in run.stderr
    assert f"--base-url http://{host}/v1" in run.stderr or "ftp://" in run.stderr  # shown without them
    assert secret not in run.stderr + run.stdout
    assert "--api-key-env" in run.stderr or "fragment" in run.stderr
    assert server.received() == [] and not out.exists()
    assert not any(secret.encode() in p.read_bytes() for p in cache_dir.rglob("*") if p.is_file())


def test_a_resume_given_a_base_url_with_credentials_does_not_echo_them(built, server, cli, tmp_path):
    release = built("agent")
    out = tmp_path / "run"
    assert cli("run", release, "--model", "openai-compatible:m", "--base-url", server.url, "-o", out).code == 0
    host = server.url.split("/")[2]
    again = cli("run", release, "-o", out, "--resume", "--base-url", f"http://u:PASS-94@{host}/v1")
    assert again.code == 2 and "holds credentials" in again.stderr
    assert "PASS-94" not in again.stderr
