#!/usr/bin/env python3
"""Our grades next to the reference scorers' on the same outputs, for benchmarks/gsm8k, mmlu and bfcl.

    .venv/bin/python bench/agreement.py [gsm8k mmlu bfcl] [--real RUN_DIR ...] [--out DIR] [--limit N]

For each benchmark it builds the release with the real CLI, makes outputs (the real model outputs
of the run directories given with --real, e.g. bench/real_benchmarks.py's SmolLM2 runs, plus
systematic variations of right and wrong answers made from each case's own data), grades them
with `trunchbull grade RELEASE responses.jsonl` (the product path), grades the same outputs with
the reference scorer in its own venv, and prints the agreement per benchmark and per kind of
output, with examples of every disagreement. `--out` keeps the responses, both gradings and a
report.json.

References, installed on first use into a cache outside the repository
($TRUNCHBULL_BENCH_CACHE, default ~/.cache/trunchbull-bench), never dependencies of the product:
  * GSM8K, MMLU: Inspect AI 0.3.285 (bench/peers.py's venv): match(numeric=True); the
    multiple_choice solver's answer parsing and choice() (bench/agreement_refs/inspect_scores.py).
  * BFCL: bfcl-eval 2026.3.23 installed with --no-deps, plus filelock (its utils module needs it);
    its AST checker and eval-runner logic (bench/agreement_refs/bfcl_scores.py, which stubs the one
    module of the import chain that would pull in every provider SDK).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import peers  # noqa: E402  (bench/peers.py: the Inspect AI venv)

CACHE = Path(os.environ.get("TRUNCHBULL_BENCH_CACHE", Path.home() / ".cache" / "trunchbull-bench"))
BFCL_VERSION = "2026.3.23"
FILELOCK_VERSION = "3.20.0"
BFCL_ROOT = CACHE / "references" / f"bfcl-eval-{BFCL_VERSION}"
BFCL_STAMP = f"bfcl-eval=={BFCL_VERSION} filelock=={FILELOCK_VERSION}\n"


def ensure_bfcl() -> Path:
    """A Python 3.11 venv with bfcl-eval (--no-deps) and filelock; returns its python."""
    python = BFCL_ROOT / "bin" / "python"
    stamp = BFCL_ROOT / ".bench-stamp"
    if stamp.is_file() and stamp.read_text() == BFCL_STAMP:
        return python
    shutil.rmtree(BFCL_ROOT, ignore_errors=True)
    BFCL_ROOT.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([peers.find_python311(), "-m", "venv", str(BFCL_ROOT)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    # --no-deps: its declared dependencies (torch through sentence-transformers, a dozen provider
    # SDKs) are for running models; pip's complaint about them is expected and kept out of sight
    for args in (["--no-deps", f"bfcl-eval=={BFCL_VERSION}"], ["--no-deps", f"filelock=={FILELOCK_VERSION}"]):
        proc = subprocess.run([*pip, *args], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"installing {args[-1]} failed:\n{proc.stderr[-3000:]}")
    stamp.write_text(BFCL_STAMP)
    return python


# ---------------------------------------------------------------------------------------------
# Outputs: (kind, response) per case, in rounds (a responses file holds each case once)


@dataclass
class Output:
    case: dict
    kind: str
    response: dict  # output, toolCalls


def _cases(release: Path) -> list[dict]:
    return [json.loads(line) for line in (release / "cases.jsonl").read_bytes().splitlines()]


def _rng(*parts: object) -> random.Random:
    return random.Random("\0".join(map(str, parts)))


def _grouped(number: str) -> str:
    whole, _, frac = number.partition(".")
    sign = "-" if whole.startswith("-") else ""
    digits = whole.lstrip("-")
    grouped = f"{int(digits):,}"
    return sign + grouped + (f".{frac}" if frac else "")


def gsm8k_outputs(case: dict, rng: random.Random) -> list[Output]:
    a = case["evaluate"]["expected"]
    wrong = str(int(float(a)) + rng.choice([1, 2, 7, 10])) if "." not in a else a + "1"
    steps = case["data"]["solution"].split("####")[0].strip().replace("<<", "").replace(">>", " ")
    fewshot = case["evalId"] == "gsm8k.fewshot"
    right = [
        ("reasoning+answer-line", f"{steps}\nANSWER: {a}"),
        ("dollars-grouped", f"Reasoning done.\nANSWER: ${_grouped(a)}.00"),
        ("units", f"ANSWER: {a} dollars"),
        ("trailing-text", f"ANSWER: {a}\n\nI hope this helps!"),
        ("bold", f"ANSWER: **{a}**"),
        ("hash-mark", f"{steps}\n#### {a}"),
        ("sentence", f"{steps} So the answer is {a}."),
        ("decimal-zero", f"ANSWER: {a}.0" if "." not in a else f"ANSWER: {a}0"),
    ]
    wrongs = [
        ("wrong-number", f"{steps}\nANSWER: {wrong}"),
        ("trailing-number", f"ANSWER: {a}\nThat took 3 steps of 4 minutes."),
        ("empty", ""),
        ("no-number", "I am not sure how to solve this."),
    ]
    rare = [  # formats where the two graders are known to read differently (docs/benchmarks.md)
        ("percent", f"ANSWER: {a}%"),
        ("boxed", f"ANSWER: \\boxed{{{a}}}"),
        (
            "hash-then-more",
            f"#### {a} (from {wrong} - {int(float(wrong)) - int(float(a))})" if "." not in a else f"#### {a}",
        ),
    ]
    first = rng.choice(right) if not fewshot else ("sentence", f" {steps} So the answer is {a}.")
    second = rng.choice(wrongs + right[:3]) if rng.random() > 0.015 else rng.choice(rare)
    return [Output(case, kind, {"output": text}) for kind, text in (first, second)]


LETTERS = "ABCD"


def mmlu_outputs(case: dict, rng: random.Random) -> list[Output]:
    right = case["data"]["answer"]
    wrong = rng.choice([x for x in LETTERS if x != right])
    variants = [
        ("answer-line", f"ANSWER: {right}"),
        ("lowercase-period", f"answer: {right.lower()}."),
        ("parenthesised", f"ANSWER: ({right})"),
        ("bold", f"ANSWER: **{right}**"),
        ("dollars", f"ANSWER: ${right}$"),
        ("reasoning-then-line", f"Let me think. Option {wrong} is tempting, but no.\nANSWER: {right}"),
        ("letter-and-text", f"ANSWER: {right}) {case['prompt'].splitlines()[-4 + LETTERS.index(right)][3:][:40]}"),
        ("no-space", f"ANSWER:{right}"),
        ("wrong-letter", f"ANSWER: {wrong}"),
        ("two-letters", f"ANSWER: {right}, {wrong}"),
        ("letter-only", right),
        ("prose", f"The answer is {right}."),
        ("two-lines", f"ANSWER: {wrong}\nANSWER: {right}"),
        ("empty", ""),
    ]
    kind, text = rng.choice(variants)
    return [Output(case, kind, {"output": text})]


# BFCL: calls made from the possible answers, then varied


def _java_source(value, ptype: str, items: str | None):
    if isinstance(value, bool):
        return "true" if value else "false"
    if ptype == "long" and isinstance(value, int):
        return f"{value}L"
    if ptype == "float" and isinstance(value, (int, float)):
        return f"{value}f"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        quote = items in ("String", None)
        inner = ", ".join(f'"{v}"' if quote and isinstance(v, str) else str(v) for v in value)
        if ptype == "ArrayList":
            return f"new ArrayList<>(Arrays.asList({inner}))"
        return f"new {'String' if quote else 'int'}[]{{{inner}}}"
    if isinstance(value, dict):
        puts = " ".join(
            f'put("{k}", {json.dumps(v[0]) if isinstance(v, list) and v and isinstance(v[0], str) else (v[0] if isinstance(v, list) and v else v)});'
            for k, v in value.items()
        )
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return value


def _js_source(value, ptype: str):
    if isinstance(value, bool):
        return "true" if value else "false"
    if ptype == "Bigint" and isinstance(value, int):
        return f"{value}n"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(f"'{v}'" if isinstance(v, str) else str(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{k}: {json.dumps(v[0]) if isinstance(v, list) and v else v}" for k, v in value.items())
            + "}"
        )
    if ptype == "String":
        return f"'{value}'"
    return value


def _argument(value, details: dict, language: str):
    ptype = details.get("type", "string")
    if language == "java":
        return _java_source(value, ptype, (details.get("items") or {}).get("type"))
    if language == "javascript":
        return _js_source(value, ptype)
    return value


def _bfcl_language(category: str) -> str:
    return "javascript" if "javascript" in category else "java" if "java" in category else "python"


def _correct_calls(case: dict, rng: random.Random) -> list[dict]:
    functions = {f["name"]: f for f in case["data"]["functions"]}
    answer = json.loads(case["data"]["answer"])["ground_truth"]
    language = _bfcl_language(case["data"]["category"])
    calls = []
    for expected in answer:
        ((name, params),) = expected.items()
        props = functions[name]["parameters"]["properties"]
        args = {}
        for param, values in params.items():
            chosen = [v for v in values if v != ""]
            if not chosen or ("" in values and rng.random() < 0.5):
                continue  # optional: left out
            args[param] = _argument(chosen[0], props.get(param, {}), language)
        calls.append({"name": name.replace(".", "_"), "arguments": args})
    return calls


def _text_call(call: dict, float_text: set[str] = frozenset()) -> dict:
    text = json.dumps(call["arguments"])
    for param in float_text:  # an int written as 5.0
        text = re.sub(rf'("{re.escape(param)}": )(-?\d+)(?=[,}}])', r"\g<1>\g<2>.0", text)
    return {"id": f"call_{call['name']}", "type": "function", "function": {"name": call["name"], "arguments": text}}


def _mutate(calls: list[dict], case: dict, rng: random.Random) -> tuple[str, list[dict]]:
    calls = json.loads(json.dumps(calls))
    kinds = ["wrong-value", "wrong-type", "missing-param", "extra-param", "wrong-function", "no-call", "extra-call"]
    if len(calls) > 1:
        kinds += ["reordered", "reordered", "missing-call"]
    kind = rng.choice(kinds)
    target = rng.choice(calls)
    args = target["arguments"]
    if kind == "reordered":
        calls.reverse()
    elif kind == "missing-call":
        calls.remove(target)
    elif kind == "extra-call":
        calls.append(json.loads(json.dumps(target)))
    elif kind == "no-call":
        calls = []
    elif kind == "wrong-function":
        target["name"] = target["name"] + "_v2"
    elif kind == "extra-param":
        args["verbose"] = True
    elif not args:
        kind = "no-call"
        calls = []
    else:
        param = rng.choice(sorted(args))
        value = args[param]
        if kind == "missing-param":
            del args[param]
        elif kind == "wrong-type":
            args[param] = str(value) if not isinstance(value, str) else 12345
        elif isinstance(value, bool):
            args[param] = not value
        elif isinstance(value, (int, float)):
            args[param] = value + 1
        elif isinstance(value, str):
            args[param] = value + " extra"
        else:
            args[param] = [] if value else ["x"]
    return kind, calls


def bfcl_outputs(case: dict, rng: random.Random) -> list[Output]:
    category = case["data"]["category"]
    functions = case["data"]["functions"]
    if "irrelevance" in category:
        f = rng.choice(functions)
        props = f["parameters"]["properties"]
        args = {
            p: (1 if d.get("type") in ("integer", "float") else "x")
            for p, d in props.items()
            if p in f["parameters"].get("required", [])
        }
        call = {"name": f["name"].replace(".", "_"), "arguments": args}
        return [
            Output(case, "irrelevance-no-call", {"output": "I cannot help with that using these functions."}),
            Output(case, "irrelevance-call", {"output": "", "toolCalls": [_text_call(call)]}),
        ]
    calls = _correct_calls(case, rng)
    first_kind = "correct"
    if rng.random() < 0.15:  # the same calls, recorded the way the AI SDK records them
        first = [
            {"type": "tool-call", "toolCallId": f"c{i}", "toolName": c["name"], "input": c["arguments"], "step": 0}
            for i, c in enumerate(calls)
        ]
        first_kind = "correct-ai-sdk-shape"
    elif rng.random() < 0.1 and calls:  # and a later step's call, which BFCL never sees
        first = [_text_call(c) for c in calls] + [{**_text_call(calls[0]), "step": 1}]
        first_kind = "correct-then-second-step"
    else:
        first = [_text_call(c) for c in calls]
    kind, mutated = _mutate(calls, case, rng)
    second = [_text_call(c) for c in mutated]
    return [
        Output(case, first_kind, {"output": "", "toolCalls": first}),
        Output(case, kind, {"output": "" if mutated else "I will not call a function.", "toolCalls": second}),
    ]


MAKERS = {"gsm8k": gsm8k_outputs, "mmlu": mmlu_outputs, "bfcl": bfcl_outputs}


def real_outputs(run_dirs: list[Path], cases: dict[str, dict]) -> list[Output]:
    out = []
    for run_dir in run_dirs:
        for line in (run_dir / "responses.jsonl").read_bytes().splitlines():
            record = json.loads(line)
            if record["caseId"] in cases and not record.get("error"):
                response = {"output": record["output"], "toolCalls": record.get("toolCalls") or []}
                out.append(Output(cases[record["caseId"]], f"real:{run_dir.name}", response))
    return out


# ---------------------------------------------------------------------------------------------
# Grading both ways


def our_grades(release: Path, outputs: list[Output], work: Path) -> list[bool | None]:
    """Through `trunchbull grade`, one responses file per round of distinct cases."""
    rounds: list[dict[str, int]] = []
    for n, o in enumerate(outputs):
        free = next((r for r in rounds if o.case["id"] not in r), None)
        if free is None:
            rounds.append(free := {})
        free[o.case["id"]] = n
    grades: list[bool | None] = [None] * len(outputs)
    for r, batch in enumerate(rounds):
        responses = work / f"responses-{r}.jsonl"
        with responses.open("w") as f:
            for case_id, n in batch.items():
                f.write(json.dumps({"caseId": case_id, **outputs[n].response}) + "\n")
        results = work / f"results-{r}.jsonl"
        proc = subprocess.run(
            [str(REPO / "trunchbull"), "grade", str(release), str(responses), "-o", str(results)],
            capture_output=True,
            text=True,
        )
        if proc.returncode not in (0, 2):  # 2: cases of the release without a response
            raise SystemExit(f"trunchbull grade failed:\n{proc.stderr[-3000:]}")
        for line in results.read_bytes().splitlines():
            row = json.loads(line)
            if row["caseId"] in batch:
                grades[batch[row["caseId"]]] = None if row["outcome"] == "error" else row["outcome"] == "pass"
    return grades


def _first_step(calls: list[dict]) -> list[dict]:
    return [c for c in calls if c.get("step", 0) == 0]


def reference_items(name: str, outputs: list[Output]) -> list[dict]:
    items = []
    for n, o in enumerate(outputs):
        case = o.case
        if name == "gsm8k":
            target = case["data"]["solution"].split("####")[-1].strip()  # inspect_evals: the text after ####
            items.append({"key": n, "task": "gsm8k", "output": o.response["output"], "target": target})
        elif name == "mmlu":
            items.append({"key": n, "task": "mmlu", "output": o.response["output"], "target": case["data"]["answer"]})
        else:
            calls = _first_step(o.response.get("toolCalls") or [])
            if calls:
                result = []
                for c in calls:
                    fn = c.get("function") or {}
                    text = fn["arguments"] if "arguments" in fn else json.dumps(c.get("input"))
                    result.append({fn.get("name") or c.get("toolName"): text})
            else:
                result = o.response["output"]
            answer = json.loads(case["data"]["answer"])["ground_truth"] if case["data"]["answer"] else None
            items.append(
                {
                    "key": n,
                    "category": case["data"]["category"],
                    "result": result,
                    "functions": case["data"]["functions"],
                    "answer": answer,
                }
            )
    return items


def reference_grades(name: str, outputs: list[Output]) -> list[bool | None]:
    if name == "bfcl":
        python, script = ensure_bfcl(), HERE / "agreement_refs" / "bfcl_scores.py"
    else:
        python, script = peers.ensure_inspect() / "bin" / "python", HERE / "agreement_refs" / "inspect_scores.py"
    payload = "".join(json.dumps(item) + "\n" for item in reference_items(name, outputs))
    env = {**os.environ, "BFCL_PROJECT_ROOT": tempfile.gettempdir()}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([str(python), str(script)], input=payload, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"the {name} reference scorer failed:\n{proc.stderr[-3000:]}")
    grades: list[bool | None] = [None] * len(outputs)
    for line in proc.stdout.splitlines():
        row = json.loads(line)
        grades[row["key"]] = row.get("passed")
    return grades


# ---------------------------------------------------------------------------------------------


def build(name: str, out: Path) -> Path:
    proc = subprocess.run(
        [str(REPO / "trunchbull"), "build", str(REPO / "benchmarks" / name), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"building benchmarks/{name} failed:\n{proc.stderr[-3000:]}")
    return out


def compare(name: str, release: Path, work: Path, real: list[Path], limit: int | None) -> dict:
    cases = _cases(release)
    if limit:
        cases = cases[:limit]
    by_id = {c["id"]: c for c in cases}
    outputs = real_outputs(real, by_id)
    for case in cases:
        outputs.extend(MAKERS[name](case, _rng(name, case["id"])))
    ours = our_grades(release, outputs, work)
    theirs = reference_grades(name, outputs)
    kinds: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    disagreements = []
    for o, a, b in zip(outputs, ours, theirs):
        family = o.kind.split(":")[0]
        kinds[family]["outputs"] += 1
        kinds[family]["passedOurs"] += bool(a)
        kinds[family]["passedReference"] += bool(b)
        if a == b:
            kinds[family]["agree"] += 1
        else:
            disagreements.append(
                {"case": o.case["id"], "kind": o.kind, "ours": a, "reference": b, "response": o.response}
            )
    total = len(outputs)
    agree = total - len(disagreements)
    return {
        "benchmark": name,
        "outputs": total,
        "agree": agree,
        "agreement": agree / total if total else None,
        "kinds": {k: dict(v) for k, v in sorted(kinds.items())},
        "disagreements": disagreements,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benchmarks", nargs="*", default=["gsm8k", "mmlu", "bfcl"])
    parser.add_argument("--real", type=Path, action="append", default=[], help="a run directory of real outputs")
    parser.add_argument("--out", type=Path, help="keep the responses, gradings and report.json here")
    parser.add_argument("--limit", type=int, help="only the first N cases of each release (a smoke run)")
    args = parser.parse_args(argv)
    work = args.out or Path(tempfile.mkdtemp(prefix="agreement-"))
    work.mkdir(parents=True, exist_ok=True)
    reports = []
    for name in args.benchmarks:
        release = build(name, work / name / "release")
        report = compare(name, release, work / name, args.real, args.limit)
        reports.append(report)
        print(
            f"\n{name}: {report['agree']:,} of {report['outputs']:,} outputs graded alike ({report['agreement']:.2%})"
        )
        print(f"  {'kind':30} {'outputs':>8} {'agree':>8} {'pass ours':>10} {'pass ref':>9}")
        for kind, c in report["kinds"].items():
            print(
                f"  {kind:30} {c['outputs']:>8} {c.get('agree', 0):>8} {c.get('passedOurs', 0):>10} {c.get('passedReference', 0):>9}"
            )
        by_kind = collections.defaultdict(list)
        for d in report["disagreements"]:
            by_kind[d["kind"]].append(d)
        for kind, items in sorted(by_kind.items()):
            example = items[0]
            shown = json.dumps(example["response"])[:160]
            print(
                f"  disagree {kind}: {len(items)} (e.g. {example['case']}: ours {example['ours']}, reference {example['reference']}: {shown})"
            )
    (work / "report.json").write_text(json.dumps(reports, indent=1) + "\n")
    print(f"\nreport: {work / 'report.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
