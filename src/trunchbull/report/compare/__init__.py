"""Paired comparison of two runs (SPEC §9): statistics, terminal rendering, the command."""
