"""The pairwise judge prompt of `compare --judge` (SPEC §9): which of two
outputs answers a case better, asked of a judge as MT-Bench asks it, and its
reply read.

The default template is MT-Bench's `pair-v2` (Zheng et al. 2023, "Judging
LLM-as-a-Judge with MT-Bench and Chatbot Arena"; FastChat's
`fastchat/llm_judge/data/judge_prompts.jsonl`), its system prompt and prompt
template copied byte for byte: placeholders `{question}` (the case's prompt),
`{answer_a}` and `{answer_b}` (the two outputs, in the order this request
shows them). With a rubric (`compare --rubric TEXT`), the system prompt's
sentence on what to consider names the criteria instead, and the prompt
gives them, `{rubric}`, after the question: Trunchbull's variant, since
MT-Bench has none. The template used is frozen in the comparison directory
(rundir/comparison_dir.py), so a comparison is continued with the text it
began with.

The reply is read for MT-Bench's verdicts, `[[A]]` (the first output is
better), `[[B]]` (the second) or `[[C]]` (a tie); the *last* one counts (the
prompt asks for the final verdict after the explanation; FastChat takes
`[[A]]` if it appears anywhere, then `[[B]]`, then `[[C]]`, which differs
only for a reply holding several). A reply with none is `error`
(`judge-unparsable`), never a preference."""

from __future__ import annotations

import re

from trunchbull.evaluators.judging import JudgeReply, JudgeRequest
from trunchbull.evaluators.messages import preview
from trunchbull.evaluators.result import Result
from trunchbull.evaluators.verdicts import UNPARSABLE

QUESTION, ANSWER_A, ANSWER_B, RUBRIC = "question", "answer_a", "answer_b", "rubric"
_PLACEHOLDER = re.compile(r"\{(question|answer_a|answer_b|rubric)\}")

# MT-Bench pair-v2 (FastChat judge_prompts.jsonl), system_prompt.
PAIR_V2_SYSTEM = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI assistants "
    "to the user question displayed below. You should choose the assistant that follows the user's instructions "
    "and answers the user's question better. Your evaluation should consider factors such as the helpfulness, "
    "relevance, accuracy, depth, creativity, and level of detail of their responses. Begin your evaluation by "
    "comparing the two responses and provide a short explanation. Avoid any positional biases and ensure that "
    "the order in which the responses were presented does not influence your decision. Do not allow the length "
    "of the responses to influence your evaluation. Do not favor certain names of the assistants. Be as "
    "objective as possible. After providing your explanation, output your final verdict by strictly following "
    'this format: "[[A]]" if assistant A is better, "[[B]]" if assistant B is better, and "[[C]]" for a tie.'
)
# MT-Bench pair-v2, prompt_template.
PAIR_V2_PROMPT = (
    "[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]"
)
_FACTORS = (
    "Your evaluation should consider factors such as the helpfulness, relevance, accuracy, depth, creativity, "
    "and level of detail of their responses."
)
_CRITERIA = "Your evaluation should consider the criteria given after the user question."
_RUBRIC_PROMPT = PAIR_V2_PROMPT.replace("{question}\n\n", "{question}\n\n[Criteria]\n{rubric}\n\n", 1)

# A verdict: [[A]] the first output is better, [[B]] the second, [[C]] a tie.
_VERDICT = re.compile(r"\[\[([ABC])\]\]")
# What a verdict says of the first output shown: its share of the preference.
FIRST_SHARE = {"A": 1.0, "B": 0.0, "C": 0.5}


def pairwise_template(rubric: str | None) -> dict:
    """The template a comparison judges with: MT-Bench's pair-v2, or its rubric variant."""
    if rubric is None:
        return {"name": "mt-bench-pair-v2", "system": PAIR_V2_SYSTEM, "prompt": PAIR_V2_PROMPT}
    return {
        "name": "mt-bench-pair-v2-rubric",
        "system": PAIR_V2_SYSTEM.replace(_FACTORS, _CRITERIA),
        "prompt": _RUBRIC_PROMPT,
    }


def render_pair(template: dict, question: str, first: str, second: str, rubric: str | None) -> tuple[dict, ...]:
    """The judge's messages for one order: `first` shown as assistant A, `second` as B.
    Placeholders are replaced in one pass (a brace in an output is text)."""
    values = {QUESTION: question, ANSWER_A: first, ANSWER_B: second, RUBRIC: rubric or ""}
    prompt = _PLACEHOLDER.sub(lambda m: values[m.group(1)], template["prompt"])
    return ({"role": "system", "content": template["system"]}, {"role": "user", "content": prompt})


def read_verdict(text: str) -> str | None:
    """The last of `[[A]]`, `[[B]]`, `[[C]]` in a reply, or None."""
    last = None
    for last in _VERDICT.finditer(text):
        pass
    return None if last is None else last.group(1)


def decide_verdict(reply: JudgeReply) -> Result:
    """A pairwise request's result: `pass` with the verdict as `grade` and the
    first output's share (1, 0, 0.5) as score; `error` without a verdict."""
    text = reply.text or ""
    verdict = read_verdict(text)
    if verdict is None:
        ended = f" (it ended with finish reason {reply.finish_reason!r})" if reply.finish_reason == "length" else ""
        message = f"the judge's reply has no verdict ([[A]], [[B]] or [[C]]){ended}: {preview(text.strip()[-200:], 80)}"
        return "error", None, message, {"error": {"kind": UNPARSABLE, "message": message}, "explanation": text}
    said = {"A": "the first output is better", "B": "the second output is better", "C": "a tie"}[verdict]
    return (
        "pass",
        FIRST_SHARE[verdict],
        f"the judge said {said} ([[{verdict}]])",
        {"grade": verdict, "explanation": text},
    )


def pairwise_request(
    template: dict, question: str, first: str, second: str, rubric: str | None, judge: str | None = None
) -> JudgeRequest:
    """The judge request for one order of a pair (`judge`: the SPEC that answers it)."""
    return JudgeRequest(render_pair(template, question, first, second, rubric), {}, decide_verdict, judge)
