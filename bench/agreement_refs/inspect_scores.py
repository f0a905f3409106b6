"""Runs inside Inspect AI's venv (bench/peers.py installs it): scores items with Inspect AI
0.3.285's own scorers, as its published tasks do. GSM8K: match(numeric=True) against the
dataset's answer (inspect_evals' gsm8k). MMLU: the multiple_choice() solver's answer parsing
(parse_answers, set_choices_based_on_generated_response) then choice() (inspect_evals'
mmlu_0_shot). Reads JSON lines {key, task, output, target} on stdin, writes {key, passed} or
{key, error}."""

import asyncio
import json
import sys
from types import SimpleNamespace

from inspect_ai.scorer import CORRECT, Target, choice, match
from inspect_ai.solver._multiple_choice import parse_answers, set_choices_based_on_generated_response
from inspect_ai.solver._task_state import Choices


async def main() -> None:
    numeric = match(numeric=True)
    letter = choice()
    for line in sys.stdin:
        item = json.loads(line)
        try:
            output = SimpleNamespace(completion=item["output"])
            if item["task"] == "gsm8k":
                score = await numeric(SimpleNamespace(output=output), Target(item["target"]))
            else:
                state = SimpleNamespace(output=output, choices=Choices(["1", "2", "3", "4"]))
                answers = parse_answers(state, multiple_correct=False)
                if answers:
                    set_choices_based_on_generated_response(state, answers)
                score = await letter(state, Target(item["target"]))
            out = {"key": item["key"], "passed": score.value == CORRECT}
        except Exception as err:  # noqa: BLE001 - a reference crash is reported per item
            out = {"key": item["key"], "error": f"{type(err).__name__}: {err}"}
        sys.stdout.write(json.dumps(out) + "\n")


asyncio.run(main())
