"""Exports of a run's results (SPEC §9): one file per format."""
