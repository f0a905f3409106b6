"""Run-directory tests use the run tests' fixtures: releases built once per
session, the CLI with a per-test cache, the local chat server."""

from tests.run.conftest import batch_server, built, cache_dir, cli, server  # noqa: F401 - shared fixtures
