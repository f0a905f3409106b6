"""Evaluator kinds of the tests, laid out like src/trunchbull/evaluators/kinds/
(one module per kind, each defining `KIND`) and documented in README.md.
The registry takes them only when pointed here (`kinds_from`): in-process
with `with kinds_from("tests.evaluators.kinds"): …`, and for the CLI with
`python -m tests.evaluators.kinds ARGS…` (__main__.py)."""
