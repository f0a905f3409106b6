"""Trunchbull: compile TS/JS LLM evaluations into immutable, reproducible releases."""

__version__ = "0.1.0"
