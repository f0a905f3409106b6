"""Trunchbull's Pants plugin: compile TS/JS LLM eval benchmarks into releases."""


def target_types():
    return []


def rules():
    return []
