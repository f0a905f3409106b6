"""The report's front end on a machine that has never bundled it: esbuild
bundles it, the bundle is cached under the cache directory, and the next
report reuses it (the same page)."""

from __future__ import annotations

from tests.report.conftest import graded_run
from tests.report.test_export import ANSWERS


def test_first_report_bundles_and_caches_the_front_end(release_of, tb, tmp_path):
    run = graded_run(tb, release_of("pairs"), ANSWERS, tmp_path / "r" / "run")
    cache = tmp_path / "empty-cache"
    env = {"TRUNCHBULL_CACHE_DIR": str(cache)}
    first = tb("report", run, "-o", tmp_path / "first.html", env=env)
    assert first.code == 0, first.stderr
    (bundle,) = (cache / "report-bundles").glob("*.json")
    cached = bundle.read_bytes()
    second = tb("report", run, "-o", tmp_path / "second.html", env=env)
    assert second.code == 0, second.stderr
    assert bundle.read_bytes() == cached
    assert (tmp_path / "first.html").read_bytes() == (tmp_path / "second.html").read_bytes()
    assert b"<script" in (tmp_path / "first.html").read_bytes()
