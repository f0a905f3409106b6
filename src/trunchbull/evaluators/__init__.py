"""Evaluators: spec validation at compile time (specs.py) and grading."""
