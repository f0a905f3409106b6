#!/usr/bin/env python3
"""The model-graded kinds next to Inspect AI's model_graded_qa / model_graded_fact: the same
judge prompt, byte for byte, and the same grade read from the same judge reply.

    .venv/bin/python bench/judge_parity.py [--triples 600] [--replies 2400] [--seed 0]
                                           [--inspect-python PATH] [--out DIR]

It generates (prompt, output, criterion) triples meant to break a template (braces, format
fields, `[BEGIN DATA]`/`[END DATA]` in any case and spacing, Unicode, newlines, long and empty
text) and judge replies in every form Inspect's reader accepts or rejects (letters and words in
any case, spacing and zero-width marks around the colon, several grades, grades inside words,
grades not offered, no grade, long reasoning). Each triple is rendered with both default
templates, with and without partial credit, and some with a generated template of the
benchmark's own; each rendering is paired with a reply. Trunchbull renders and reads through the
product's own path (the compile-time check that freezes the template, the kind's prepared
evaluator, its `decide`); Inspect AI 0.3.285 through its real scorer, whose grader is a mockllm
model answering with the reply (bench/agreement_refs/inspect_judge.py, in Inspect's venv from
bench/peers.py, or --inspect-python). It prints the agreement of prompts and of grades and
lists every disagreement; --out keeps the items and both sides' answers (report.json).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from trunchbull.evaluators.inputs import Preparation  # noqa: E402
from trunchbull.evaluators.judging import JudgeReply  # noqa: E402
from trunchbull.evaluators.registry import kinds, prepare  # noqa: E402
from trunchbull.evaluators.specs import validate_spec  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Triples: text built from pieces that stress a format template and the data block

WORDS = ["refund", "window", "thirty", "days", "policy", "déjà", "Straße", "中文", "🙂", "naïve", "ﬁ", "İ"]
HAZARDS = [
    "{",
    "}",
    "{{",
    "}}",
    "{question}",
    "{answer}",
    "{criterion}",
    "{instructions}",
    "{0}",
    "{x.y}",
    "{x!r}",
    "{:>10}",
    "[BEGIN DATA]",
    "[END DATA]",
    "[end data]",
    "[End Data]",
    "[END  DATA]",
    "[END\u00a0DATA]",
    "[END-DATA]",
    "[BEGIN DATA][END DATA]",
    "***",
    "************",
    "GRADE: C",
    "GRADE: I",
    "\n",
    "\r\n",
    "\t",
    "\\",
    '"',
    "'",
    "%s",
    "$LETTER",
    "\u200b",
    "\u202e",
]


def text(rng: random.Random, *, allow_empty: bool, long: bool = False) -> str:
    count = rng.randint(0 if allow_empty else 1, 400 if long else 14)
    parts = [rng.choice(HAZARDS) if rng.random() < 0.3 else rng.choice(WORDS) for _ in range(count)]
    out = rng.choice(["", " "]).join(parts)
    return out if allow_empty or out.strip() else "x" + out


def triples(rng: random.Random, n: int) -> list[tuple[str, str, str]]:
    out = []
    for i in range(n):
        long = i % 25 == 0
        question = text(rng, allow_empty=False, long=long)
        answer = text(rng, allow_empty=True, long=long and i % 2 == 0)
        criterion = text(rng, allow_empty=False)
        out.append((question, answer, criterion))
    return out


def own_template(rng: random.Random) -> str:
    """A template of a benchmark's own: the placeholders in some order, literal braces, a newline."""
    fields = ["{question}", "{answer}", "{criterion}", "{instructions}"]
    rng.shuffle(fields)
    if rng.random() < 0.3:
        fields.remove("{instructions}")
    if rng.random() < 0.2 and "{question}" in fields:
        fields.remove("{question}")
    glue = ["\n", "\n====\n", " — ", "\n{{literal}}\n", "\n[BEGIN DATA]\n", "\n}}{{\n"]
    return "Grade this.\n" + "".join(field + rng.choice(glue) for field in fields)


# ---------------------------------------------------------------------------------------------
# Replies: every form the reader accepts or rejects

GRADE_WORDS = ["GRADE", "Grade", "grade", "gRaDe", "GRADES", "downgrade", "UPGRADE", "_GRADE", "GRADE_", "GRADE2"]
SEPARATORS = [
    ":",
    " :",
    ": ",
    " : ",
    ":\n",
    "\n:\n",
    ":\u200b",
    "\u200b:",
    ":\ufeff",
    ":\u2060",
    ":\u00a0",
    "：",
    " - ",
    "",
]
VALUES = [
    "C",
    "P",
    "I",
    "c",
    "p",
    "i",
    "correct",
    "Correct",
    "INCORRECT",
    "incorrect",
    "partial",
    "Partial",
    "CI",
    "B",
    "A",
    "$LETTER",
    "",
    "C.",
    "I,",
    "C**",
    "Cé",
    "Ｃ",
    "CORRECTLY",
    "partially",
    "1",
    "_C",
    "C_",
]
REASONING = ["The submission meets the criterion.", "It misses the 30-day window.", "Step 1: compare.\nStep 2: decide.",
             "The answer says GRADE: C but that is not my verdict.", "Between C and I, I choose", "**Verdict**",
             "Reasoning about {criterion}", "[END DATA]"]  # fmt: skip


def reply(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
        if rng.random() < 0.6:
            parts.append(rng.choice(REASONING))
        if rng.random() < 0.5:  # the form the instructions ask for, so that every grade is well represented
            parts.append("GRADE: " + rng.choice(["C", "P", "I", "correct", "incorrect", "partial"]))
        else:
            parts.append(rng.choice(GRADE_WORDS) + rng.choice(SEPARATORS) + rng.choice(VALUES))
    if rng.random() < 0.5:
        parts.append(rng.choice(["", ".", "\n", " because it is right.", "**", "\n\nThanks!", " GRADE:"]))
    if rng.random() < 0.05:
        parts.insert(0, "word " * rng.randint(50, 250))  # long reasoning (Inspect's reader is quadratic: bounded)
    return rng.choice(["", " ", "\n"]).join(parts)


# ---------------------------------------------------------------------------------------------
# The two sides


def ours(item: dict) -> dict:
    """Through the product: the spec checked and frozen as the compiler does, prepared as the grader does."""
    kind = "rubric" if item["kind"] == "qa" else "factuality"
    spec = {"kind": kind, "rubric" if kind == "rubric" else "expected": item["criterion"]}
    spec["partialCredit"] = item["partial"]
    if item["template"] is not None:
        spec["template"] = item["template"]
    compiled, problems = validate_spec(spec)
    if problems or compiled is None:
        return {"key": item["key"], "error": "; ".join(p.message for p in problems)}
    files = kinds()[kind].release_files(compiled) if kinds()[kind].release_files else {}
    evaluate = prepare(compiled, Preparation(release_files=files))
    request = evaluate(item["question"], item["answer"])
    outcome, _score, _message, details = request.decide(JudgeReply(item["reply"]))
    grade = details.get("grade") if outcome != "error" else None
    return {"key": item["key"], "prompt": request.messages[0]["content"], "grade": grade}


def inspect_python(given: str | None) -> Path:
    if given:
        return Path(given)
    import peers  # bench/peers.py: installs Inspect AI 0.3.285 on first use

    return peers.ensure_inspect() / "bin" / "python"


def theirs(items: list[dict], python: Path) -> dict[int, dict]:
    script = HERE / "agreement_refs" / "inspect_judge.py"
    payload = "".join(json.dumps(item) + "\n" for item in items)
    proc = subprocess.run([str(python), str(script)], input=payload, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"the reference failed:\n{proc.stderr[-3000:]}")
    return {row["key"]: row for row in map(json.loads, proc.stdout.splitlines())}


def items(n_triples: int, n_replies: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for question, answer, criterion in triples(rng, n_triples):
        for kind in ("qa", "fact"):
            for partial in (False, True):
                out.append({"kind": kind, "partial": partial, "template": None})
                out[-1].update(question=question, answer=answer, criterion=criterion)
        if rng.random() < 0.2:
            out.append(
                {"kind": rng.choice(["qa", "fact"]), "partial": rng.random() < 0.5, "template": own_template(rng)}
            )
            out[-1].update(question=question, answer=answer, criterion=criterion)
    replies = [reply(rng) for _ in range(max(n_replies, len(out)))]
    while len(out) < len(replies):  # more replies than renderings: reuse renderings for them
        out.append(dict(rng.choice(out[: 4 * n_triples])))
    # and every grade word × separator × value, after some reasoning, once with and once without partial credit
    question, answer, criterion = out[0]["question"], out[0]["answer"], out[0]["criterion"]
    for i, (word, separator, value) in enumerate(itertools.product(GRADE_WORDS, SEPARATORS, VALUES)):
        out.append({"kind": "qa", "partial": i % 2 == 0, "template": None, "question": question})
        out[-1].update(answer=answer, criterion=criterion)
        replies.append(f"{rng.choice(REASONING)}\n{word}{separator}{value}")
    for key, (item, text_) in enumerate(zip(out, replies)):
        item.update(key=key, reply=text_)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--triples", type=int, default=600)
    parser.add_argument("--replies", type=int, default=2400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--inspect-python", help="the python of a venv with inspect-ai 0.3.285 (default: bench/peers.py's)"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    jobs = items(args.triples, args.replies, args.seed)
    started = time.perf_counter()
    mine = {job["key"]: ours(job) for job in jobs}
    our_s = time.perf_counter() - started
    started = time.perf_counter()
    reference = theirs(jobs, inspect_python(args.inspect_python))
    their_s = time.perf_counter() - started

    default = [job for job in jobs if job["template"] is None]
    rendered = {k for k in {job["key"] for job in default}}
    own = [job for job in jobs if job["template"] is not None]
    prompt_diff = [job for job in jobs if mine[job["key"]].get("prompt") != reference[job["key"]].get("prompt")]
    grade_diff = [job for job in jobs if mine[job["key"]].get("grade") != reference[job["key"]].get("grade")]
    errors = [job for job in jobs if "error" in mine[job["key"]] or "error" in reference[job["key"]]]
    triples_rendered = len({(j["question"], j["answer"], j["criterion"]) for j in default})
    graded = {"C": 0, "P": 0, "I": 0, None: 0}
    for job in jobs:
        graded[reference[job["key"]].get("grade")] += 1
    report = {
        "inspect": "0.3.285",
        "seed": args.seed,
        "triples": triples_rendered,
        "defaultRenderings": len(rendered),
        "ownTemplateRenderings": len(own),
        "promptsIdentical": len(jobs) - len(prompt_diff),
        "replies": len(jobs),
        "referenceGrades": {str(k): v for k, v in graded.items()},
        "gradesAgree": len(jobs) - len(grade_diff),
        "agreement": (len(jobs) - len(grade_diff)) / len(jobs),
        "errors": len(errors),
        "seconds": {"trunchbull": round(our_s, 3), "inspect": round(their_s, 3)},
        "promptDisagreements": [
            {**job, "ours": mine[job["key"]], "inspect": reference[job["key"]]} for job in prompt_diff
        ],
        "gradeDisagreements": [
            {**job, "ours": mine[job["key"]], "inspect": reference[job["key"]]} for job in grade_diff
        ],
    }
    print(f"judge parity with Inspect AI 0.3.285 (seed {args.seed})")
    print(
        f"  prompts: {report['promptsIdentical']:,} of {len(jobs):,} byte-identical "
        f"({len(rendered):,} default-template renderings of {triples_rendered:,} triples, {len(own):,} with a "
        "template of the benchmark's own)"
    )
    print(
        f"  grades:  {report['gradesAgree']:,} of {len(jobs):,} replies read alike ({report['agreement']:.2%}); "
        f"the reference graded C {graded['C']:,}, P {graded['P']:,}, I {graded['I']:,}, none {graded[None]:,}"
    )
    print(f"  errors on either side: {len(errors):,}; seconds: ours {our_s:.2f}, Inspect's {their_s:.2f}")
    for job in (prompt_diff + grade_diff)[:20]:
        print(f"  DISAGREEMENT {job['key']}: reply {job['reply']!r}: ours {mine[job['key']].get('grade')!r}, "
              f"Inspect's {reference[job['key']].get('grade')!r}")  # fmt: skip
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    return 0 if not prompt_diff and report["agreement"] >= 0.99 and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
