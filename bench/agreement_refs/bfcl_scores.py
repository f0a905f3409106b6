"""Runs inside the bfcl-eval venv (bench/agreement.py installs it, --no-deps, plus filelock):
grades items with BFCL's own code, as its eval runner does for a function-calling model
(bfcl_eval/eval_checker/eval_runner.py: _evaluate_single_ast_entry, _evaluate_single_relevance_entry).

The checker's import chain reaches bfcl_eval/constants/model_config.py, which imports every
model handler and their provider SDKs; the checker only reads one field of it
(MODEL_CONFIG_MAPPING[model].underscore_to_dot), so that module is stubbed with one entry for a
function-calling OpenAI-style model whose tool names had `.` replaced by `_`. The decoding of a
function-calling reply is OpenAICompletionsHandler.decode_ast's (its module needs the openai SDK):
each call's name and json.loads of its arguments.

Reads JSON lines {key, category, result, functions, answer} on stdin (result: the list of
{name: arguments JSON text} of the reply, or its text when it made no call), writes
{key, passed} or {key, error}."""

import json
import sys
import types

MODEL = "gpt-4o-2024-11-20-FC"
stub = types.ModuleType("bfcl_eval.constants.model_config")
stub.MODEL_CONFIG_MAPPING = {MODEL: types.SimpleNamespace(underscore_to_dot=True)}
sys.modules["bfcl_eval.constants.model_config"] = stub

from bfcl_eval.constants.enums import Language  # noqa: E402
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # noqa: E402
from bfcl_eval.utils import is_empty_output, is_function_calling_format_output, is_java, is_js  # noqa: E402


def decode_fc(result):
    """OpenAICompletionsHandler.decode_ast for a function-calling model."""
    decoded_output = []
    for invoked_function in result:
        name = list(invoked_function.keys())[0]
        params = json.loads(invoked_function[name])
        decoded_output.append({name: params})
    return decoded_output


def grade(item):
    category = item["category"]
    if "irrelevance" in category:
        try:
            decoded = decode_fc(item["result"])
            contain_func_call = not is_empty_output(decoded)
        except Exception:
            contain_func_call = False
        return not contain_func_call
    language = Language.JAVA if is_java(category) else Language.JAVASCRIPT if is_js(category) else Language.PYTHON
    try:
        decoded = decode_fc(item["result"])
    except Exception:
        return False
    if not is_function_calling_format_output(decoded):
        return False
    return ast_checker(item["functions"], decoded, item["answer"], language, category, MODEL)["valid"]


for line in sys.stdin:
    item = json.loads(line)
    try:
        out = {"key": item["key"], "passed": bool(grade(item))}
    except Exception as err:  # a crash of the checker is reported per item
        out = {"key": item["key"], "error": f"{type(err).__name__}: {err}"}
    sys.stdout.write(json.dumps(out) + "\n")
