"""Runs inside Inspect AI's venv (bench/peers.py installs it): grades items with Inspect AI
0.3.285's own model_graded_qa / model_graded_fact scorers, their grader a mockllm model whose
reply is the item's. Reads JSON lines {key, kind: "qa" | "fact", partial, template (null: the
default), question, answer, criterion, reply} on stdin and writes {key, prompt, grade}: the
prompt Inspect sent its grader (as the grader received it) and the grade it read (C, P, I, or
null when it left the sample unscored), or {key, error}."""

import asyncio
import json
import sys

from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Target, model_graded_fact, model_graded_qa
from inspect_ai.solver import TaskState

USAGE = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # (else mockllm counts with tiktoken, online)


async def grade(item: dict) -> dict:
    reply = ModelOutput.from_content(model="mockllm/model", content=item["reply"])
    reply.usage = USAGE
    grader = get_model("mockllm/model", custom_outputs=[reply], memoize=False)
    factory = model_graded_fact if item["kind"] == "fact" else model_graded_qa
    scorer = factory(template=item["template"], partial_credit=item["partial"], model=grader)
    answer = ModelOutput.from_content(model="mockllm/model", content=item["answer"])
    state = TaskState(model="mockllm/model", sample_id=1, epoch=1, input=item["question"], messages=[], output=answer)
    score = await scorer(state, Target(item["criterion"]))
    prompt = score.metadata["grading"][0]
    value = score.value if isinstance(score.value, str) and score.value in ("C", "P", "I") else None
    return {"key": item["key"], "prompt": prompt.text, "grade": value}


async def main() -> None:
    for line in sys.stdin:
        item = json.loads(line)
        try:
            out = await grade(item)
        except Exception as err:  # noqa: BLE001 - a reference crash is reported per item
            out = {"key": item["key"], "error": f"{type(err).__name__}: {err}"}
        sys.stdout.write(json.dumps(out) + "\n")


asyncio.run(main())
