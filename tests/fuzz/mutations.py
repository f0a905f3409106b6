"""Hypothesis strategies that turn a copy of a fixture benchmark (or a valid
responses file) into hostile input: mutated bytes, hostile JS values and
top-level statements, config keys and paths, broken CSV/JSONL structure,
special files and symlinks, names that are not UTF-8. Each mutation is
drawn as data (a tuple), so Hypothesis can print, replay and shrink it; and
applied to a directory by `apply`."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
BASES = ("minimal", "data", "support")

# Top-level statements user code might run before its export.
HOSTILE_STATEMENTS = [
    'Object.defineProperty(Object.prototype, "toJSON", { value: function () { return "hijack" } })',
    'Object.defineProperty(Array.prototype, "toJSON", { value: () => 1 })',
    'Object.defineProperty(Object.prototype, "get", { value: () => 1, configurable: true })',
    'Object.defineProperty(Object.prototype, "value", { get() { throw new Error("trap") } })',
    'Object.defineProperty(Array.prototype, "0", { set(v) {}, get() { return 1 }, configurable: true })',
    'Object.prototype.ok = false; Object.prototype.then = (r) => r(1)',
    "JSON.stringify = () => '{\"ok\": true}'",
    "JSON.parse = () => ({})",
    'String.prototype.replace = function () { return "x" }; String.prototype.slice = () => ""',
    "Array.prototype.push = function () { return 0 }; Array.prototype.map = () => []",
    "Array.prototype[Symbol.iterator] = function* () {}",
    "RegExp.prototype.exec = () => null; RegExp.prototype.test = () => true",
    "Set.prototype.has = () => true; Map.prototype.get = () => undefined",
    "Object.keys = () => []; Object.getPrototypeOf = () => null",
    'Object.setPrototypeOf(Array.prototype, { toJSON() { return "x" } })',
    'Error.prototype.name = { toString() { throw new Error("no") } }',
    'require("node:fs").writeSync(1, "garbage\\n{\\"ok\\": 1}\\n")',
    'process.stdout.write("{\\"ok\\": true}\\n")',
    'console.log("x".repeat(100000))',
    'throw new Error("top-level boom")',
    'throw Object.create(null)',
    "process.exit(0)",
    "process.exit(3)",
    'globalThis.Buffer = undefined',
    'Promise.prototype.then = function () { return this }',
]

# Values put in place of an authored literal.
HOSTILE_VALUES = [
    "undefined",
    "NaN",
    "-Infinity",
    "10n",
    'Symbol("s")',
    "new Date(0)",
    "() => 1",
    "null",
    "[]",
    "{}",
    '"\\ud800"',
    '"a\\u0000b"',
    '"x".repeat(1 << 20)',
    '"../../etc/passwd"',
    '"/etc/passwd"',
    '"./missing.jsonl"',
    '"./x.csv"',
    '"' + "a" * 300 + '.jsonl"',
    "(() => { let v = 0; for (let i = 0; i < 100; i++) v = [v]; return v })()",
    '{ get id() { throw new Error("getter") } }',
    "new Proxy({}, {})",
    "Object.create(null)",
    '["a", , "b"]',
    "(() => { const o = {}; o.o = o; return o })()",
    '{ __proto__: { id: "x" } }',
    '{ ["__proto__"]: 1 }',
    '"evals/\\udcff.ts"',
    "1e309",
    "-0",
    '"\\u2028"',
]

CONFIG_EDITS = [
    '{ protocolVersion: 1, evals: ["evals/pipe.ts"] }',
    '{ protocolVersion: 1, evals: ["' + "x" * 5000 + '.ts"] }',
    '{ protocolVersion: 1, evals: ["evals/\\u0000.ts"] }',
    '{ protocolVersion: 1, evals: ["evals/loop.ts"] }',
    '{ protocolVersion: 1, evals: ["evals"] }',
    '{ protocolVersion: 1, tools: ["tools/pipe.ts"] }',
    '{ protocolVersion: 1, evals: ["evals/a.ts/b.ts"] }',
    '{ protocolVersion: 2, titel: "x" }',
    '{ protocolVersion: 1, evals: [] }',
    '{ protocolVersion: 1, version: "' + "v" * 100 + '" }',
    "[1, 2]",
    "{ ...x }",
]

SPECIAL_KINDS = (
    "fifo",
    "socket",
    "dir",
    "symlink-loop",
    "symlink-dangling",
    "symlink-devzero",
    "symlink-outside",
    "empty",
    "bad-utf8-name",
)
SPECIAL_PLACES = (
    "evals/pipe.ts",
    "tools/pipe.ts",
    "evals/loop.ts",
    "tsconfig.json",
    "evals/tsconfig.json",
    "package.json",
    "benchmark.config.ts",
    "evals/capitals.csv",
    "evals/sentiment.jsonl",
    "evals/trivia/questions.tsv",
    "evals/trivia/transform.ts",
    "lib/prompts.ts",
    "evals/x.csv",
    "package-lock.json",
    "evals/refunds.ts",
    "tools/support.ts",
)


def _files(base: str) -> list[str]:
    root = REPO / "examples" / base
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != "BUILD")


def mutation(base: str):
    """One mutation of benchmark `base`, as data."""
    files = _files(base)
    modules = [f for f in files if f.endswith((".ts", ".mts", ".js", ".mjs"))]
    data = [f for f in files if f.endswith((".csv", ".jsonl", ".tsv", ".json"))]
    return st.one_of(
        st.tuples(
            st.just("bytes"),
            st.sampled_from(files),
            st.integers(0, 4000),
            st.binary(min_size=0, max_size=8),
            st.integers(0, 8),
        ),
        st.tuples(st.just("statement"), st.sampled_from(modules), st.sampled_from(HOSTILE_STATEMENTS)),
        st.tuples(st.just("value"), st.sampled_from(modules), st.integers(0, 50), st.sampled_from(HOSTILE_VALUES)),
        st.tuples(st.just("config"), st.sampled_from(CONFIG_EDITS)),
        st.tuples(
            st.just("lines"),
            st.sampled_from(data or files),
            st.sampled_from(("truncate", "duplicate", "drop", "column", "quote", "blank", "crlf", "bom", "nul")),
        ),
        st.tuples(st.just("special"), st.sampled_from(SPECIAL_KINDS), st.sampled_from(SPECIAL_PLACES)),
    )


def benchmark_case():
    """(base, [mutations]) — one to three mutations of one fixture benchmark."""
    return st.sampled_from(BASES).flatmap(
        lambda base: st.tuples(st.just(base), st.lists(mutation(base), min_size=1, max_size=3))
    )


def copy_base(base: str, dest: Path) -> Path:
    shutil.copytree(REPO / "examples" / base, dest, ignore=shutil.ignore_patterns("dist", "node_modules", "BUILD"))
    return dest


def _replace_file(path: Path) -> None:
    if path.is_symlink() or path.exists():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)


def _writable(path: Path) -> bool:
    """A regular file of the copy itself: never written through a symlink
    (one may point out of the trial) nor into a named pipe."""
    return path.is_file() and not path.is_symlink()


def apply(root: Path, change: tuple, sockets: list) -> None:
    kind = change[0]
    if kind == "bytes":
        _, name, offset, insert, delete = change
        path = root / name
        if not _writable(path):
            return
        data = path.read_bytes()
        offset = min(offset, len(data))
        path.write_bytes(data[:offset] + insert + data[offset + delete :])
    elif kind == "statement":
        _, name, statement = change
        path = root / name
        if _writable(path):
            path.write_text(statement + "\n" + path.read_text(errors="replace"))
    elif kind == "value":
        _, name, index, value = change
        path = root / name
        if not _writable(path):
            return
        text = path.read_text(errors="replace")
        quotes = [i for i, c in enumerate(text) if c == '"']
        literals = list(zip(quotes[::2], quotes[1::2]))
        if literals:
            start, end = literals[index % len(literals)]
            path.write_text(text[:start] + value + text[end + 1 :])
    elif kind == "config":
        _replace_file(root / "benchmark.config.ts")
        (root / "benchmark.config.ts").write_text(f"export default {change[1]}\n")
    elif kind == "lines":
        _lines(root / change[1], change[2])
    elif kind == "special":
        _special(root, change[1], change[2], sockets)


def _lines(path: Path, how: str) -> None:
    if not _writable(path):
        return
    data = path.read_bytes()
    lines = data.split(b"\n")
    if how == "truncate":
        data = data[: len(data) // 2]
    elif how == "duplicate":
        data = b"\n".join(lines + lines[1:])
    elif how == "drop":
        data = b"\n".join(lines[:1])
    elif how == "column":
        data = b"\n".join(line + b",extra" for line in lines)
    elif how == "quote":
        data = data.replace(b",", b',"', 1)
    elif how == "blank":
        data = b"\n\n".join(lines)
    elif how == "crlf":
        data = data.replace(b"\n", b"\r\n")
    elif how == "bom":
        data = b"\xef\xbb\xbf" + data
    elif how == "nul":
        data = data.replace(b"e", b"\0", 3)
    path.write_bytes(data)


def _special(root: Path, kind: str, place: str, sockets: list) -> None:
    path = root / place
    _replace_file(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        if len(str(path)) < 100:  # AF_UNIX path limit
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(str(path))
            sockets.append(server)
    elif kind == "dir":
        path.mkdir()
    elif kind == "symlink-loop":
        os.symlink(path.name, path)
    elif kind == "symlink-dangling":
        os.symlink("nowhere/at/all", path)
    elif kind == "symlink-devzero":
        os.symlink("/dev/zero", path)
    elif kind == "symlink-outside":  # to a file beside the benchmark root, outside it
        outside = root.parent / "outside.ts"
        outside.write_text('export default { id: "outside", prompt: "p", evaluate: { kind: "non_empty" } }\n')
        os.symlink(outside, path)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "bad-utf8-name":
        os.makedirs(path.parent, exist_ok=True)
        (path.parent / os.fsdecode(b"bad\xff\xfename.ts")).write_text(
            'export default { id: "bad", prompt: "p", ' 'evaluate: { kind: "non_empty" } }\n'
        )


# ---------------------------------------------------------------- responses files


def responses_mutation():
    return st.one_of(
        st.tuples(st.just("bytes"), st.integers(0, 400), st.binary(max_size=8), st.integers(0, 8)),
        st.tuples(
            st.just("line"),
            st.integers(0, 5),
            st.sampled_from(
                [
                    b"\xff\xfe invalid utf-8",
                    b'{"caseId": "answer", "output": "4\x002"}',
                    b"[1, 2, 3]",
                    b'"just a string"',
                    b'{"caseId": "answer", "output": NaN}',
                    b'{"caseId": "answer", "output": "x", "usage": {"t": Infinity}}',
                    b'{"caseId": "answer", "caseId": "answer", "output": "42"}',
                    b'{"caseId": "answer", "output": "42"',
                    b"[" * 100_000 + b"]" * 100_000,
                    b'{"caseId": "answer", "output": "' + b"x" * 5_000_000 + b'"}',
                    b"",
                    b"   ",
                    b"null",
                    b'{"caseId": 1, "output": 2}',
                    b'{"caseId": "ghost", "output": "x"}',
                    b'{"caseId": "answer", "output": "42", "toolCalls": [{"function": {"name": "x", "arguments": "{"}}]}',
                    b'{"caseId": "\\ud800", "output": "x"}',
                    b'{"a":' * 10_000 + b"1" + b"}" * 10_000,
                ]
            ),
        ),
        st.tuples(st.just("torn"), st.integers(1, 30)),
    )


def apply_responses(data: bytes, change: tuple) -> bytes:
    kind = change[0]
    if kind == "bytes":
        _, offset, insert, delete = change
        offset = min(offset, len(data))
        return data[:offset] + insert + data[offset + delete :]
    if kind == "line":
        _, index, line = change
        lines = data.split(b"\n")
        lines.insert(min(index, len(lines)), line)
        return b"\n".join(lines)
    return data[: max(0, len(data) - change[1])]  # a torn last line
