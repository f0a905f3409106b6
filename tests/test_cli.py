"""Command-line friction: a misspelt flag and a mis-cased provider get a "did you mean"."""

from __future__ import annotations

from tests.conftest import run_cli


def test_misspelt_flag_suggests_the_option(tmp_path):
    result = run_cli("run", tmp_path, "--modle", "echo", "-o", tmp_path / "run")
    assert result.code == 2 and "--modle (did you mean --model?)" in result.stderr
    result = run_cli("leaderboard", tmp_path, tmp_path, "--jsno")
    assert result.code == 2 and "did you mean --json?" in result.stderr


def test_mis_cased_provider_suggests_the_provider(tmp_path):
    result = run_cli("run", tmp_path, "--model", "OpenAI:gpt-4o", "-o", tmp_path / "run")
    assert result.code == 2 and "unknown provider 'OpenAI' (did you mean 'openai'?)" in result.stderr
    assert not (tmp_path / "run").exists()
