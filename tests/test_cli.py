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


def test_every_command_help_is_printed_as_written():
    """Each command's --help exits 0 and shows its text as written: a percent sign escaped for
    argparse's %-formatting appears once (descriptions are not %-formatted, help strings are)."""
    listing = run_cli("--help").stdout.split("  COMMAND\n", 1)[1].split("\n\n", 1)[0]
    names = [line.split()[0] for line in listing.splitlines() if line[:4] == "    " and line[4:5].isalpha()]
    assert {"build", "run", "report", "compare", "leaderboard", "export"} <= set(names), names
    for name in names:
        result = run_cli(name, "--help")
        assert result.code == 0, (name, result.stderr)
        assert "%%" not in result.stdout and "%(" not in result.stdout, (name, result.stdout)


def test_the_help_lists_the_registries_formats():
    """The data-file formats and export formats the help names are the registries' (none written by hand)."""
    from trunchbull.compile.cases.sources import sources
    from trunchbull.report.exports.formats import formats

    text = " ".join(run_cli("--help").stdout.split())
    assert f"(plain TypeScript/JavaScript, {', '.join(s.name for s in sources().values())})" in text
    for fmt in formats().values():
        assert fmt.title in text.split("--format junit", 1)[1].split("trunchbull leaderboard")[0]
    export_help = " ".join(run_cli("export", "--help").stdout.split())
    assert f"--format {{{','.join(formats())}}}" in export_help
