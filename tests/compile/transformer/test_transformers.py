"""Transformers (SPEC §3.7, issue #3) with real Node: sources, limits,
determinism across deliberately varied sandboxes, and sandbox limits."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import orjson
import pytest
from trunchbull.node.toolchain import JS_DIR

from tests.compile.transformer.helpers import build, failed, read_cases, transformer_bench

MIB = 1024 * 1024

JOIN = """
type Source = { content: string; path: string; sha256: string }
export default {
  name: "qa-join",
  async transform({ questions, answers }: { questions: Source; answers: Source }) {
    const answerOf = Object.fromEntries(answers.content.trim().split("\\n").map((l) => l.split("=")))
    await new Promise((resolve) => setTimeout(resolve, 5))
    return questions.content.trim().split("\\n").map((line, i) => {
      const [id, prompt] = line.split("|")
      return {
        id,
        prompt,
        evaluate: { kind: "exact", expected: answerOf[id] },
        data: { i, seen: { questions: questions.sha256, answers: answers.sha256 },
                paths: [questions.path, answers.path], length: questions.content.length },
      }
    })
  },
}
"""


def simple(expr: str, imports: str = "") -> str:
    """A transformer returning two cases whose data.x is `expr`."""
    return f"""{imports}
export default {{
  name: "probe",
  transform(sources: Record<string, {{ content: string }}>) {{
    return ["c0", "c1"].map((id) => ({{ id, prompt: "p " + id, data: {{ x: {expr} }} }}))
  }},
}}
"""


def test_deterministic_transformer_over_two_sources(tmp_path):
    questions = "q.one|What is one?\nq.two|What is two?\n"
    answers = "q.one=1\nq.two=2\n"
    root = transformer_bench(tmp_path / "b", JOIN, {"questions": questions, "answers": answers})
    run = build(root)
    assert run.code == 0, run.stdout + run.stderr
    cases = read_cases(run.out)
    assert [c["id"] for c in cases] == ["q.one", "q.two"]
    expected_sha = {
        "questions": hashlib.sha256(questions.encode()).hexdigest(),
        "answers": hashlib.sha256(answers.encode()).hexdigest(),
    }
    for case in cases:
        assert case["data"]["seen"] == expected_sha
        assert case["data"]["paths"] == ["evals/gen/questions.txt", "evals/gen/answers.txt"]
        assert case["data"]["length"] == len(questions)
        assert case["source"]["transformer"] == "evals/gen/transform.ts"
        assert case["source"]["module"] == "evals/gen.ts"
    assert cases[1]["evaluate"] == {"kind": "exact", "expected": "2"}
    manifest = orjson.loads((run.out / "release.json").read_bytes())
    inputs = manifest["inputs"]
    assert (
        inputs["evals/gen/transform.ts"] == hashlib.sha256((root / "evals/gen/transform.ts").read_bytes()).hexdigest()
    )
    assert inputs["evals/gen/questions.txt"] == expected_sha["questions"]
    assert inputs["evals/gen/answers.txt"] == expected_sha["answers"]
    assert manifest["counts"]["evals"] == 1  # the transformer module is not taken for an eval


def test_cases_of_every_size_arrive_intact(tmp_path):
    """Cases are streamed in chunks of about 1 MiB: small ones share a chunk,
    and one larger than a chunk travels alone; multibyte text (2- and 4-byte
    UTF-8, a surrogate pair in JavaScript) survives either way."""
    unit = "a\u00e9\U0001f600"  # a, é, 😀
    sizes = [1, 1000, 300_000, 100_000, 10, 200_000, 3]
    module = f"""export default {{ name: "sizes", transform({{ data }}) {{
  const unit = data.content.trim()
  return {sizes}.map((n, i) => ({{ id: `s${{i}}`, prompt: unit.repeat(n) }}))
}} }}
"""
    run = build(transformer_bench(tmp_path / "b", module, {"data": unit + "\n"}))
    assert run.code == 0, run.stdout + run.stderr
    cases = read_cases(run.out)
    assert [c["id"] for c in cases] == [f"s{i}" for i in range(len(sizes))]
    assert [c["prompt"] for c in cases] == [unit * n for n in sizes]


def test_local_imports_are_bundled_and_recorded(tmp_path):
    module = """import { makeCase } from "./lib"
export default { name: "with-lib", transform: ({ data }: any) => [makeCase(data.content.trim())] }
"""
    lib = "export const makeCase = (text: string) => ({ id: \"lib.case\", prompt: text })\n"
    root = transformer_bench(tmp_path / "b", module, extra={"evals/gen/lib.ts": lib})
    run = build(root)
    assert run.code == 0, run.stdout + run.stderr
    assert read_cases(run.out)[0]["prompt"] == "one"
    inputs = orjson.loads((run.out / "release.json").read_bytes())["inputs"]
    assert "evals/gen/lib.ts" in inputs and "evals/gen/data.txt" in inputs


@pytest.mark.parametrize("count", [0, 17])
def test_zero_or_seventeen_sources_rejected(tmp_path, count):
    sources = {f"s{i}": f"{i}\n" for i in range(count)}
    root = transformer_bench(tmp_path / "b", simple("1"), sources)
    diag = failed(build(root), "transformer-sources", "evals/gen.ts")
    assert f"found {count}" in diag["message"] and "1-16" in diag["message"]


def test_sixteen_sources_accepted(tmp_path):
    sources = {f"s{i}": f"{i}\n" for i in range(16)}
    module = """export default { name: "many", transform: (s: any) => Object.keys(s).map((k) => ({ id: k.toLowerCase(), prompt: s[k].content })) }"""
    run = build(transformer_bench(tmp_path / "b", module, sources))
    assert run.code == 0, run.stdout
    assert len(read_cases(run.out)) == 16


def test_source_over_50_mib_rejected(tmp_path):
    root = transformer_bench(tmp_path / "b", simple("1"), {"big": b"a" * (50 * MIB + 1)})
    diag = failed(build(root), "transformer-source-size", "evals/gen.ts")
    assert "50 MiB" in diag["message"] and f"{50 * MIB + 1:,}" in diag["message"]


def test_repository_wide_source_limit_counts_each_file_once(tmp_path):
    root = tmp_path / "b"
    sizes = 45 * MIB
    evals = {}
    for i in range(5):
        (root / "data").mkdir(parents=True, exist_ok=True)
        with open(root / "data" / f"part{i}.txt", "wb") as f:  # sparse: NUL bytes are valid UTF-8
            f.truncate(sizes)
    shared = 'export default { id: "e%d", evaluate: { kind: "non_empty" }, cases: { transformer: "../t.ts", sources: %s } }\n'
    # four evals share part0..part3 (180 MiB, each file counted once): within the limit
    for i in range(4):
        evals[f"evals/e{i}.ts"] = shared % (
            i,
            orjson.dumps({"a": "../data/part0.txt", "b": f"../data/part{i}.txt"}).decode(),
        )
    files = {
        "benchmark.config.ts": "export default { protocolVersion: 1 }\n",
        "t.ts": 'export default { name: "t", transform: () => [] }\n',
        **evals,
    }
    from tests.compile.transformer.helpers import write_tree

    write_tree(root, files)
    run = build(root, env={"TRUNCHBULL_TRANSFORM_DEADLINE": "60"})
    assert "transformer-sources-total" not in run.codes(), run.stdout
    # a fifth file takes the repository over 200 MiB
    write_tree(root, {"evals/e4.ts": shared % (4, orjson.dumps({"a": "../data/part4.txt"}).decode())})
    diag = failed(build(root), "transformer-sources-total", "evals/e4.ts")
    assert "200 MiB" in diag["message"]


def test_non_utf8_source_rejected(tmp_path):
    root = transformer_bench(tmp_path / "b", simple("1"), {"latin": "caf\u00e9\n".encode("latin-1")})
    diag = failed(build(root), "transformer-source-encoding", "evals/gen/latin.txt")
    assert "UTF-8" in diag["message"] and diag["line"] == 1


# Sources are checked in 1 MiB chunks: a character may straddle two chunks.
def test_multibyte_character_across_chunks_accepted(tmp_path):
    text = ("x" * (MIB - 1) + "\u20ac tail\n").encode()  # the euro sign's 3 bytes straddle the first chunk's end
    module = """export default { name: "len", transform: ({ data }) => [{ id: "a", prompt: "p", data: { n: data.content.length } }] }"""
    run = build(transformer_bench(tmp_path / "b", module, {"data": text}))
    assert run.code == 0, run.stdout
    assert read_cases(run.out)[0]["data"] == {"n": len(text.decode())}


@pytest.mark.parametrize("tail, line", [(b"\xc3", 3), (b"\xe2\x82(", 3), (b"\xff\nmore\n", 3)])
def test_invalid_utf8_after_the_first_chunk_located(tmp_path, tail, line):
    text = b"a\n" + b"x" * (MIB - 4) + b"\n" + tail  # line 3 starts just before the second chunk
    diag = failed(
        build(transformer_bench(tmp_path / "b", simple("1"), {"data": text})),
        "transformer-source-encoding",
        "evals/gen/data.txt",
    )
    assert diag["line"] == line and f"byte {len(text) - len(tail)}" in diag["message"], diag


NONDETERMINISM = {
    "math-random": ("Math.random()", ""),
    "date-now": ("Date.now()", ""),
    "new-date": ("new Date().toISOString()", ""),
    "timezone-offset": ("new Date(0).getTimezoneOffset()", ""),
    "tz-name": ("Intl.DateTimeFormat().resolvedOptions().timeZone", ""),
    "env-contents": ("JSON.stringify(process.env)", ""),
    "env-keys": ("Object.keys(process.env).join(',')", ""),
    "user-info": ("userInfo().username", 'import { userInfo } from "node:os"'),
    "home": ("homedir()", 'import { homedir } from "node:os"'),
    "home-env": ("process.env.HOME", ""),
    "cwd": ("process.cwd()", ""),
    "locale": ("(1234.5).toLocaleString()", ""),
}


@pytest.mark.parametrize("name", sorted(NONDETERMINISM))
def test_nondeterminism_rejected(tmp_path, name):
    expr, imports = NONDETERMINISM[name]
    root = transformer_bench(tmp_path / "b", simple(expr, imports))
    diag = failed(build(root), "transformer-nondeterministic", "evals/gen/transform.ts")
    message = diag["message"]
    assert "transformer 'probe'" in message
    assert "case 0 (id 'c0')" in message and "field data.x" in message, message
    assert "run 1 gave" in message and "run 2 gave" in message


@pytest.mark.parametrize("odd_run, tz", [(1, "Pacific/Kiritimati"), (2, "Etc/GMT+12")])
def test_nondeterministic_json_compatibility_rejected(tmp_path, odd_run, tz):
    """One run returns a function where the other returns data: the runs differ."""
    module = simple(f"process.env.TZ === {orjson.dumps(tz).decode()} ? () => 1 : 1")
    diag = failed(
        build(transformer_bench(tmp_path / "b", module)), "transformer-nondeterministic", "evals/gen/transform.ts"
    )
    values = ("null", "1") if odd_run == 1 else ("1", "null")
    assert f"run 1 gave {values[0]}, run 2 gave {values[1]}" in diag["message"], diag


def test_nondeterministic_case_count_rejected(tmp_path):
    module = """export default { name: "count", transform: () => Array.from({ length: Math.random() < 2 ? process.cwd().length : 0 }, (_, i) => ({ id: `c${i}`, prompt: "p" })) }"""
    diag = failed(
        build(transformer_bench(tmp_path / "b", module)), "transformer-nondeterministic", "evals/gen/transform.ts"
    )
    assert "run 1 returned" in diag["message"] and "first differing case: index" in diag["message"]


def test_long_values_are_shortened(tmp_path):
    diag = failed(
        build(transformer_bench(tmp_path / "b", simple("'x'.repeat(500) + Math.random()"))),
        "transformer-nondeterministic",
    )
    assert "…" in diag["message"] and len(diag["message"]) < 600


WRITES = {
    "write-file": 'import { writeFileSync } from "node:fs"\nconst act = () => writeFileSync(ESCAPE, "x")',
    "write-caught": 'import { writeFileSync } from "node:fs"\nconst act = () => { try { writeFileSync(ESCAPE, "x") } catch {} }',
    "spawn": 'import { execSync } from "node:child_process"\nconst act = () => execSync("touch " + ESCAPE)',
    "spawn-caught": 'import { spawnSync } from "node:child_process"\nconst act = () => { try { spawnSync("touch", [ESCAPE]) } catch {} }',
    "worker": 'import { Worker } from "node:worker_threads"\nconst act = () => new Worker("console.log(1)", { eval: true })',
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_writes_and_processes_are_stopped(tmp_path, name):
    escape = tmp_path / "escaped.txt"
    module = (
        WRITES[name].replace("ESCAPE", orjson.dumps(str(escape)).decode())
        + """
export default { name: "bad", transform() { act(); return [{ id: "a", prompt: "p" }] } }
"""
    )
    diag = failed(build(transformer_bench(tmp_path / "b", module)), "transformer-sandbox", "evals/gen/transform.ts")
    assert "sandbox" in diag["message"]
    assert not escape.exists()


def test_infinite_loop_stopped_at_deadline(tmp_path):
    module = 'export default { name: "loop", transform() { for (;;) {} } }\n'
    diag = failed(
        build(
            transformer_bench(tmp_path / "b", module), env=_isolated(tmp_path, {"TRUNCHBULL_TRANSFORM_DEADLINE": "3"})
        ),
        "transformer-deadline",
        "evals/gen/transform.ts",
    )
    assert "deadline" in diag["message"] and "3 s" in diag["message"]
    _assert_no_transform_process_left(tmp_path)


def test_never_settling_promise_stopped_at_deadline(tmp_path):
    module = 'export default { name: "wait", transform: () => new Promise(() => { setInterval(() => {}, 1000) }) }\n'
    failed(
        build(transformer_bench(tmp_path / "b", module), env={"TRUNCHBULL_TRANSFORM_DEADLINE": "2"}),
        "transformer-deadline",
        "evals/gen/transform.ts",
    )


def _isolated(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    """The build's environment with its scratch directories under `tmp_path`, so that the runs of
    this test's build are told from those of tests running beside it (their sandboxes read them)."""
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    return {**env, "TMPDIR": str(scratch)}


def _running_transform_processes(tmp_path: Path) -> list[int]:
    """Live (not zombie) Node processes running this checkout's transform.mjs for a build whose
    scratch directories are under `tmp_path` (`_isolated`)."""
    script = str(JS_DIR / "compile/transform.mjs")
    mine = str(tmp_path / "scratch")
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if (
                proc.name.isdigit()
                and script in (cmdline := (proc / "cmdline").read_bytes().decode(errors="replace"))
                and mine in cmdline
                and (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
            ):
                found.append(int(proc.name))
        except OSError:  # it ended meanwhile
            continue
    return found


def _assert_no_transform_process_left(tmp_path: Path) -> None:
    """Every run of the build has ended. A run killed just before the build
    returned may still be in the kernel's exit path: the wait is only a
    hang guard, and running out of it means a run was left running."""
    if not Path("/proc/self/cmdline").exists():
        return
    guard = time.monotonic() + 60
    while _running_transform_processes(tmp_path) and time.monotonic() < guard:
        time.sleep(0.05)
    assert not _running_transform_processes(tmp_path), "a transformer run outlived the build"


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc to see the runs' processes")
def test_work_left_pending_after_the_result_does_not_hold_up_the_build(tmp_path):
    """A transformer that returns its cases but leaves a busy loop scheduled:
    its result is complete, so each run is stopped once its response is in,
    instead of being waited for until the deadline; no run is left spinning."""
    module = """export default { name: "spin", transform() {
  setTimeout(() => { for (;;) {} }, 0)
  return [{ id: "a", prompt: "p" }]
} }
"""
    assert not _running_transform_processes(tmp_path)
    # A deadline no run could reach: the busy loops never end by themselves, so
    # a build that returns has stopped both runs once their responses were in
    # (the subprocess timeout only turns a hang into a failure).
    run = build(
        transformer_bench(tmp_path / "b", module),
        env=_isolated(tmp_path, {"TRUNCHBULL_TRANSFORM_DEADLINE": "86400"}),
        timeout=600,
    )
    assert run.code == 0, run.stdout + run.stderr
    assert [c["id"] for c in read_cases(run.out)] == ["a"]
    _assert_no_transform_process_left(tmp_path)


def test_a_busy_loop_that_starts_before_the_result_is_stopped_at_the_deadline(tmp_path):
    """Pending work that runs before transform's promise settles keeps the
    result from ever arriving: the deadline stops it."""
    module = """export default { name: "spin", transform() {
  setTimeout(() => { for (;;) {} }, 0)
  return new Promise((resolve) => setTimeout(() => resolve([{ id: "a", prompt: "p" }]), 10))
} }
"""
    diag = failed(
        build(
            transformer_bench(tmp_path / "b", module),
            env=_isolated(tmp_path, {"TRUNCHBULL_TRANSFORM_DEADLINE": "3"}),
            timeout=120,
        ),
        "transformer-deadline",
        "evals/gen/transform.ts",
    )
    assert "deadline" in diag["message"] and "3 s" in diag["message"]
    _assert_no_transform_process_left(tmp_path)


def test_memory_cap(tmp_path):
    module = """export default { name: "hog", transform() { const keep = []; for (;;) keep.push(new Array(1e6).fill(keep.length)) } }\n"""
    diag = failed(
        build(transformer_bench(tmp_path / "b", module), env={"TRUNCHBULL_TRANSFORM_MEMORY_MB": "64"}),
        "transformer-memory",
        "evals/gen/transform.ts",
    )
    assert "memory" in diag["message"]


def test_reading_outside_the_sandbox_is_stopped(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("s")
    module = f"""import {{ readFileSync }} from "node:fs"
export default {{ name: "peek", transform: () => [{{ id: "a", prompt: readFileSync({orjson.dumps(str(secret)).decode()}, "utf8") }}] }}
"""
    failed(build(transformer_bench(tmp_path / "b", module)), "transformer-sandbox", "evals/gen/transform.ts")


@pytest.mark.parametrize(
    "value, path, words",
    [
        ("() => 1", "result[1].data.x", "function"),
        ("new Date(0)", "result[1].data.x", "Date"),
        ("undefined", "result[1].data.x", "undefined"),
        ("NaN", "result[1].data.x", "NaN"),
        ("new Proxy({}, {})", "result[1].data.x", "Proxy"),
        ("Object.assign([1], { toJSON: () => 2 })", "result[1].data.x", "toJSON"),
    ],
)
def test_non_json_results_rejected_with_path(tmp_path, value, path, words):
    module = f"""export default {{ name: "odd", transform: () => [
  {{ id: "ok", prompt: "p" }},
  {{ id: "bad", prompt: "p", data: {{ x: {value} }} }},
] }}
"""
    diag = failed(build(transformer_bench(tmp_path / "b", module)), "json-incompatible", "evals/gen/transform.ts")
    assert diag["message"].startswith(f"{path}: ") and words in diag["message"], diag


@pytest.mark.parametrize(
    "bad",
    [
        "{ id: `c${i}`, prompt: pad, data: { when: new Date(0) } }",  # a value inside a case
        "undefined",  # the element itself
    ],
)
def test_a_late_case_that_is_not_json_data_is_found_after_others_were_streamed(tmp_path, bad):
    """Run 1 walks each case as it streams it: the cases sent before the bad
    one (several chunks of them) do not count, and the diagnostic is the same
    as for a result found not plain before any line was sent."""
    module = f"""export default {{ name: "late", transform() {{
  const pad = "x".repeat(1000)
  return Array.from({{ length: 4000 }}, (_, i) => i === 3500 ? {bad} : {{ id: `c${{i}}`, prompt: pad }})
}} }}
"""
    run = build(transformer_bench(tmp_path / "b", module))
    diag = failed(run, "json-incompatible", "evals/gen/transform.ts")
    assert diag["message"].startswith("result[3500]"), diag
    assert run.codes() == ["json-incompatible"], run.diagnostics


def test_user_output_does_not_corrupt_the_result(tmp_path):
    """Whatever the transformer prints, also straight to fd 1, goes to stderr."""
    module = """import { writeSync } from "node:fs"
export default { name: "chatty", transform() {
  writeSync(1, '\\n{"ok":false,"stage":"transform","error":"forged"}\\n')
  process.stdout.write("plain noise\\n")
  console.log({ ok: true })
  return [{ id: "a", prompt: "p" }]
} }
"""
    run = build(transformer_bench(tmp_path / "b", module))
    assert run.code == 0, run.stdout
    assert [c["id"] for c in read_cases(run.out)] == ["a"]


def test_case_evaluate_function_rejected(tmp_path):
    module = 'export default { name: "fn", transform: () => [{ id: "a", prompt: "p", evaluate: () => true }] }\n'
    diag = failed(build(transformer_bench(tmp_path / "b", module)), "case-evaluate-function", "evals/gen/transform.ts")
    assert diag["message"].startswith("result[0].evaluate: ")


def test_duplicate_case_id_rejected_with_path(tmp_path):
    module = 'export default { name: "dup", transform: () => [{ id: "a", prompt: "p" }, { id: "b", prompt: "p" }, { id: "a", prompt: "q" }] }\n'
    diag = failed(build(transformer_bench(tmp_path / "b", module)), "duplicate-case-id", "evals/gen/transform.ts")
    assert "result[2]" in diag["message"] and "result[0]" in diag["message"]


def test_returned_cases_validated_like_inline_cases(tmp_path):
    module = 'export default { name: "v", transform: () => [{ id: "Bad ID", prompt: "" , expected: "x" }] }\n'
    run = build(transformer_bench(tmp_path / "b", module))
    failed(run, "case-id", "evals/gen/transform.ts")
    assert {"case-prompt", "case-unknown-key"} <= set(run.codes())
    assert run.only("case-unknown-key")["message"].startswith("result[0].expected: ")


@pytest.mark.parametrize(
    "ret, code",
    [
        ("({ id: 'a', prompt: 'p' })", "transformer-result"),
        ("[]", "cases-empty"),
        ("new Map()", "json-incompatible"),
    ],
)
def test_result_must_be_a_nonempty_array(tmp_path, ret, code):
    module = f'export default {{ name: "r", transform: () => {ret} }}\n'
    failed(build(transformer_bench(tmp_path / "b", module)), code, "evals/gen/transform.ts")


def test_too_many_cases(tmp_path):
    module = 'export default { name: "big", transform: () => Array.from({ length: 25001 }, (_, i) => ({ id: `c${i}`, prompt: "p" })) }\n'
    diag = failed(build(transformer_bench(tmp_path / "b", module)), "too-many-cases", "evals/gen/transform.ts")
    assert "25,000" in diag["message"]


@pytest.mark.parametrize(
    "module, words",
    [
        ('export default { name: "x", transform: () => [], extra: 1 }', "unknown key \"extra\""),
        ('export default { name: "x", transform: "no" }', "transform must be a function"),
        ('export default { transform: () => [] }', "lacks name"),
        ('export const transform = () => []', "no default export"),
    ],
)
def test_export_shape_rejected(tmp_path, module, words):
    diag = failed(
        build(transformer_bench(tmp_path / "b", module + "\n")), "transformer-export", "evals/gen/transform.ts"
    )
    assert words in diag["message"]


def test_name_must_be_an_authoring_id(tmp_path):
    module = 'export default { name: "Not An ID", transform: () => [{ id: "a", prompt: "p" }] }\n'
    diag = failed(build(transformer_bench(tmp_path / "b", module)), "transformer-name", "evals/gen/transform.ts")
    assert "not a valid ID" in diag["message"]


def test_thrown_error_reported(tmp_path):
    module = 'export default { name: "boom", transform() { throw new TypeError("bad row 3") } }\n'
    diag = failed(build(transformer_bench(tmp_path / "b", module)), "transformer-error", "evals/gen/transform.ts")
    assert "TypeError: bad row 3" in diag["message"]


@pytest.mark.parametrize(
    "paths, code",
    [
        ({"data": "../../outside.txt"}, "transformer-source-path"),
        ({"data": "/etc/passwd"}, "transformer-source-path"),
        ({"data": "./gen/missing.txt"}, "transformer-source-missing"),
        ({"1bad": "./gen/data.txt"}, "transformer-source-name"),
    ],
)
def test_source_path_rules(tmp_path, paths, code):
    (tmp_path / "outside.txt").write_text("x")
    root = transformer_bench(tmp_path / "b", simple("1"), source_paths=paths)
    failed(build(root), code, "evals/gen.ts")


def test_transformer_path_rules(tmp_path):
    root = transformer_bench(tmp_path / "b", simple("1"))
    text = (root / "evals/gen.ts").read_text()
    (root / "evals/gen.ts").write_text(text.replace("./gen/transform.ts", "./gen/nope.ts"))
    failed(build(root), "transformer-missing", "evals/gen.ts")
    (root / "evals/gen.ts").write_text(text.replace("./gen/transform.ts", "../../t.ts"))
    failed(build(root), "transformer-path", "evals/gen.ts")


def test_example_benchmark_builds_with_its_transformer(tmp_path):
    import os
    import subprocess
    import sys

    from tests.compile.transformer.helpers import REPO

    out = tmp_path / "release"
    proc = subprocess.run(
        [sys.executable, "-m", "trunchbull", "build", str(REPO / "examples/data"), "-o", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert proc.returncode == 0, proc.stderr
    trivia = [c for c in read_cases(out) if c["evalId"] == "trivia"]
    assert [c["id"] for c in trivia][:2] == ["trivia.planets", "trivia.au"]
    inputs = orjson.loads((out / "release.json").read_bytes())["inputs"]
    assert {"evals/trivia/transform.ts", "evals/trivia/questions.tsv", "evals/trivia/answers.json"} <= set(inputs)
