"""A property: whatever text a model or a tool produces — any code point,
lone UTF-16 surrogates, NUL, U+2028, bytes that are not UTF-8 in the HTTP
body — goes through record → grade → report → export with no error: each
record is valid UTF-8 JSON that every reader takes, its text is what was
sent with only what UTF-8 cannot hold made U+FFFD, and every command that
reads the run directory succeeds. Through the real CLI, the real AI SDK
provider and tool loop, against the local server."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.run.conftest import cli_env
from tests.run.test_run_resilience import check_records, completion
from tests.support.chat_server import ChatServer, Reply

CASES = 6  # the fixture's text.0 … text.5
ODD = ["\ud800", "\udfff", "\udc00\ud800", "\x00", "\u2028", "\u2029", "\ufeff", "\ufffd", "\U0010ffff", '"\\']
# byte sequences that are not UTF-8: a lone continuation byte, a cut sequence, an encoded surrogate, past U+10FFFF
NOT_UTF8 = [b"", b"\xff", b"\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]

text = st.lists(
    st.one_of(st.text(st.characters(blacklist_categories=()), max_size=40), st.sampled_from(ODD)), max_size=6
).map("".join)
sample = st.tuples(text, text, st.sampled_from(NOT_UTF8), st.integers(0, 100))


def as_utf8(value: str) -> str:
    """What a record holds of `value` (a Python string of code points, which
    JavaScript sees as UTF-16): a high and a low surrogate side by side are
    one character there, and every surrogate left alone becomes U+FFFD."""
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def reply_body(content: str, junk: bytes, at: int) -> tuple[bytes, str]:
    """A completion whose content is `content` with `junk` spliced in raw
    (at an escape boundary), and the text the record should hold."""
    escaped = [json.dumps(ch)[1:-1] for ch in content]  # ASCII-only escapes, lone surrogates included
    cut = at * len(escaped) // 100
    literal = "".join(escaped[:cut]).encode() + junk + "".join(escaped[cut:]).encode()
    body = json.dumps(completion("PLACEHOLDER")).encode().replace(b'"PLACEHOLDER"', b'"' + literal + b'"')
    expected = as_utf8(content[:cut] + junk.decode("utf-8", "replace") + content[cut:])
    return body, expected


def cli(*args, env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "trunchbull", *map(str, args)], capture_output=True, text=True, env=env, cwd=REPO
    )


def test_any_text_round_trips_through_record_grade_report_export(built, tmp_path_factory):
    release = built("unruly")

    @settings(
        max_examples=5,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(sample, min_size=CASES, max_size=CASES))
    def trial(samples):
        tmp = tmp_path_factory.mktemp("text")
        env = cli_env(tmp / "cache")
        expected = {}
        with ChatServer() as server:
            for i, (tool_text, model_text, junk, at) in enumerate(samples):
                body, output = reply_body(model_text, junk, at)
                arguments = json.dumps({"text": tool_text})  # lone surrogates as \ud800 escapes
                server.script(f"[text-{i}]", [Reply(tool_calls=[("echo_text", arguments)]), Reply(raw=body)])
                expected[f"text.{i}"] = (as_utf8(tool_text), output)
            run = cli("run", release, "--model", "openai-compatible:m", "--base-url", server.url, "-o", tmp / "run",
                      "--retries", "0", env=env)  # fmt: skip
        assert run.returncode in (0, 1) and "Traceback" not in run.stderr, run.stderr
        records = check_records(tmp / "run" / "responses.jsonl")
        for case_id, (tool_output, output) in expected.items():
            record = records[case_id]
            assert record["error"] is None, record
            (result,) = record["toolResults"]
            assert result["output"] == tool_output
            assert record["output"] == output
            if record["repaired"] is not None:
                assert record["repaired"] == ["unencodable-text"]
        for args in (
            ["grade", release, tmp / "run" / "responses.jsonl", "-o", tmp / "graded.jsonl"],
            ["report", tmp / "run", "-o", tmp / "report.html"],
            ["export", tmp / "run", "--format", "junit"],
            ["export", tmp / "run", "--format", "csv"],
        ):
            done = cli(*args, env=env)
            assert done.returncode in (0, 1) and "Traceback" not in done.stderr, (args, done.stderr)
            assert "warning" not in done.stderr, (args, done.stderr)  # nothing was left out

    trial()
