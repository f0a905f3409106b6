"""What an evaluator may read (SPEC §4), named once: each evaluator kind
declares the inputs it reads (`Kind.reads`), and the grader hands it exactly
those. The names are the keys of a custom evaluator's input object (every
sample input but the prompt, which only model-graded kinds read), so a
declarative kind and a custom `evaluate` function speak of the same things.

Two sorts of input:

* **sample inputs** vary with each graded sample and are passed to the
  prepared evaluator, one positional argument each, in the order the kind
  declares them;
* **preparation inputs** are fixed for many samples and are given once, when
  the evaluator is prepared (`Preparation`); the grader keys its prepared
  evaluators on the spec plus exactly these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, NamedTuple

if TYPE_CHECKING:
    from trunchbull.evaluators.tool_calls import ToolSchemas

# Sample inputs.
OUTPUT = "output"  # the model's final text (str)
CASE_DATA = "caseData"  # the case's `data` (any JSON, None when it has none)
TOOL_CALLS = "toolCalls"  # the tool calls as recorded (list, AI SDK or OpenAI shapes; a run's carry `step`)
NORMALIZED_TOOL_CALLS = "normalizedToolCalls"  # the same as [{toolName, input, valid}] (tool_calls.py)
FINISH_REASON = "finishReason"  # the last step's finish reason (str or None)
USAGE = "usage"  # {inputTokens, outputTokens, totalTokens} (dict or None)
PROMPT = "prompt"  # the case's prompt, as the model was sent it (str): what a judge is told the task was
# What a custom evaluator reads, in the order its input object lists them.
CUSTOM_INPUTS = (OUTPUT, CASE_DATA, TOOL_CALLS, NORMALIZED_TOOL_CALLS, FINISH_REASON, USAGE)
SAMPLE_INPUTS = (*CUSTOM_INPUTS, PROMPT)

# Preparation inputs.
CASE_TOOLS = "caseTools"  # the case's tools entries, with the release's tool schemas
MODEL = "model"  # a judge model: the kind grades by asking it (judging.py)
RELEASE_FILES = "releaseFiles"  # the release's files by name: a spec may name one (a frozen judge template)
PREPARATION_INPUTS = (CASE_TOOLS, MODEL, RELEASE_FILES)

INPUTS = SAMPLE_INPUTS + PREPARATION_INPUTS


class Preparation(NamedTuple):
    """What a kind's `prepare` is given besides its spec: each field is set
    only when the kind reads the input it stands for, else None."""

    case_tools: list | None = None  # CASE_TOOLS: the case's tools entries (names, or {tool, as})
    tool_schemas: ToolSchemas | None = None  # CASE_TOOLS: the release's tools' JSON Schemas
    judge_model: str | None = None  # MODEL: the model spec of the judge that will answer
    release_files: Mapping[str, bytes] | None = None  # RELEASE_FILES: the release's files by name


NOTHING = Preparation()
