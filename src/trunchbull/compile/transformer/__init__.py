"""Transformer-backed cases (SPEC §3.7): the spec, the two sandboxed runs, their comparison."""
