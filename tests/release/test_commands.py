"""The error paths of `inspect`, `diff`, `verify` and `init`: a missing
path, something that is not a release, a release that does not verify, a
directory init must not write into. Each is a usage error (exit 2) with one
clear line, no traceback, and nothing written."""

from __future__ import annotations

import os
import stat

import pytest

from tests.compile.helpers import build_ok
from tests.conftest import EXAMPLES, run_cli


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("rel") / "minimal"
    build_ok(EXAMPLES / "minimal", out)
    return out


def tampered(release, tmp_path):
    copy = tmp_path / "tampered"
    for path in sorted(release.rglob("*")):
        target = copy / path.relative_to(release)
        if path.is_dir():
            target.mkdir(parents=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    cases = copy / "cases.jsonl"
    cases.write_bytes(cases.read_bytes().replace(b"six", b"ten"))
    return copy


def no_traceback(result) -> None:
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr


@pytest.mark.parametrize("command", ["inspect", "verify"])
def test_a_missing_path_or_a_directory_that_is_no_release(command, tmp_path):
    missing = run_cli(command, tmp_path / "nope")
    assert missing.code == 2 and f"'{tmp_path / 'nope'}' does not exist" in missing.stderr
    (tmp_path / "plain").mkdir()
    plain = run_cli(command, tmp_path / "plain")
    assert plain.code == 2 and "is not a release (no release.json)" in plain.stderr
    (tmp_path / "junk.tar").write_bytes(b"not a tar at all")
    junk = run_cli(command, tmp_path / "junk.tar")
    assert junk.code == 2, junk.stderr
    for result in (missing, plain, junk):
        no_traceback(result)
        assert result.stdout == ""


def test_inspect_and_diff_refuse_a_release_that_does_not_verify(release, tmp_path):
    bad = tampered(release, tmp_path)
    assert run_cli("verify", bad).code == 1
    inspected = run_cli("inspect", bad)
    assert inspected.code == 2 and "is not an intact release: cases.jsonl: sha256 is" in inspected.stderr
    assert f"`trunchbull verify {bad}` lists them" in inspected.stderr
    diffed = run_cli("diff", release, bad, "--json")
    assert diffed.code == 2 and diffed.stdout == "" and "is not an intact release" in diffed.stderr
    for result in (inspected, diffed):
        no_traceback(result)
    assert run_cli("diff", release, release).stdout.strip() == "no differences in cases or tools"


def test_init_refuses_a_non_empty_directory_and_writes_nothing(tmp_path):
    target = tmp_path / "mine"
    target.mkdir()
    (target / "notes.md").write_text("my notes\n")
    result = run_cli("init", target)
    assert result.code == 2 and "is not empty (notes.md)" in result.stderr
    assert sorted(p.name for p in target.iterdir()) == ["notes.md"]
    no_traceback(result)


def test_init_into_a_fresh_repository_and_its_failures(tmp_path):
    fresh = tmp_path / "repo"
    (fresh / ".git").mkdir(parents=True)  # dot-files do not count: a new repository is empty
    assert run_cli("init", fresh).code == 0
    assert (fresh / "evals" / "capitals.ts").is_file()
    (tmp_path / "file").write_text("x")
    on_file = run_cli("init", tmp_path / "file")
    assert on_file.code == 2 and "exists and is not a directory" in on_file.stderr
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
        denied = run_cli("init", locked / "bench")
        assert denied.code == 2 and "cannot write the benchmark" in denied.stderr
        assert not (locked / "bench").exists()
    for result in (on_file,):
        no_traceback(result)
