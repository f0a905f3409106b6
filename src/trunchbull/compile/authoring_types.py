"""`trunchbull.d.ts`: TypeScript declarations of everything a benchmark
exports (the config, eval modules, cases, tool modules, transformers and a
custom evaluator's arguments), for editors and `trunchbull check --types`.

Generated, never written by hand, from the tables the compile checks read:
the config keys (config.py), eval keys (evals.py), case keys
(cases/fields.py), the keys of a tools entry (release/tool_offers.py), the
data-file formats (cases/sources.py), the transformer spec's keys
(transformer/spec.py) and the evaluator kind registry (evaluator_types.py).
Each table's keys must all have a type here, and a type here must name a key
of its table: a key added to a check without its type (or the reverse)
stops the generation with an error, and tests/compile/test_types.py holds the
committed copy (docs/trunchbull.d.ts) to what this module generates.

The declarations are one ambient module, `"trunchbull"`: authors write
`import type { Eval } from "trunchbull"` and `export default { … } satisfies
Eval`. Type-only imports are erased by esbuild before anything is resolved,
so no benchmark imports Trunchbull at run time."""

from __future__ import annotations

from dataclasses import dataclass

from trunchbull import __version__
from trunchbull.common.paths import MODULE_SUFFIXES
from trunchbull.compile.cases.fields import CASE_KEYS
from trunchbull.compile.cases.sources import sources
from trunchbull.compile.config import CONFIG_KEYS
from trunchbull.compile.evaluator_types import KeyType, interface_name, kind_keys
from trunchbull.compile.evals import EVAL_KEYS
from trunchbull.compile.transformer.spec import TRANSFORMER_KEYS
from trunchbull.evaluators.registry import kinds, row_kinds
from trunchbull.release.manifest import PROTOCOL_VERSION
from trunchbull.release.tool_offers import OFFER_KEYS

FILE_NAME = "trunchbull.d.ts"
MODULE = "trunchbull"


@dataclass(frozen=True)
class Field:
    ts: str
    required: bool
    doc: str


ID_DOC = "an authoring ID: a lowercase letter or digit, then lowercase letters, digits, `.`, `_`, `-`; at most 120"
TEXT = "a non-empty string"

CONFIG_FIELDS = {
    "protocolVersion": Field(
        str(PROTOCOL_VERSION), True, f"the protocol this benchmark is written for: {PROTOCOL_VERSION}"
    ),
    "title": Field("string", False, f"{TEXT}; default: the benchmark root directory's name"),
    "version": Field("string", False, f"{TEXT} of at most 64 characters"),
    "evals": Field(
        "[ModulePath, ...ModulePath[]]", False, "eval modules, relative to this file; default: discovered under evals/"
    ),
    "tools": Field("ModulePath[]", False, "tool modules, relative to this file; default: discovered under tools/"),
}

# The eval keys every shape shares; `prompt`, `cases` and `evaluate` make the shapes (_eval_shapes).
EVAL_FIELDS = {
    "id": Field("string", True, f"the eval's ID, unique in the release: {ID_DOC}"),
    "title": Field("string", False, f"{TEXT}; default: the ID"),
    "description": Field("string", False, TEXT),
    "systemPrompt": Field("string", False, f"{TEXT}, inherited by cases that set none"),
    "tools": Field("ToolEntry[]", False, "the tools offered to the model, inherited by cases that set none"),
}
SHAPE_KEYS = ("prompt", "cases", "evaluate")

CASE_FIELDS = {
    "id": Field("string", True, f"unique in the whole release and never prefixed: {ID_DOC}"),
    "prompt": Field("string", True, TEXT),
    "description": Field("string", False, f"{TEXT}; default: the eval's"),
    "systemPrompt": Field("string", False, f"{TEXT}; default: the eval's"),
    "tools": Field("ToolEntry[]", False, "replaces the eval's list"),
    "data": Field("Data", False, "private grading data (JSON), never shown to the model"),
    "evaluate": Field("EvaluatorSpec", False, "default: the eval's evaluator"),
}

OFFER_FIELDS = {
    "tool": Field("string", True, "the release tool (its description, schema and execute)"),
    "as": Field("string", True, "the name the model sees and calls"),
}

TRANSFORMER_FIELDS = {
    "transformer": Field("ModulePath", True, "the transformer module, relative to the eval module"),
    "sources": Field("{ [name: string]: string }", True, "1-16 named source files, relative to the eval module"),
}

# What a custom evaluator is called with (grading/grader.py builds it;
# tests/compile/test_types.py checks a real call's keys against these).
EVALUATOR_ARGS = {
    "output": Field("string", True, "the model's final text"),
    "caseData": Field("Data", True, "the case's `data` (`null` when it has none)"),
    "toolCalls": Field("JsonObject[]", True, "the raw tool calls as recorded, each with its `step`"),
    "normalizedToolCalls": Field("NormalizedToolCall[]", True, "the tool calls as `{ toolName, input, valid }`"),
    "finishReason": Field("string | null", True, "why the model stopped (`stop`, `length`, `tool-calls`, …)"),
    "usage": Field("Usage | null", True, "token counts, when known"),
}


def typed_fields(table: dict[str, Field], keys: tuple[str, ...], what: str, indent: str = "    ") -> str:
    """The properties of `table`, in the order of the check's `keys`; both must name the same keys."""
    if set(table) != set(keys):
        raise ValueError(
            f"{what}: the check's keys {sorted(keys)} and the declared types {sorted(table)} differ; "
            "give every key a type in compile/authoring_types.py"
        )
    lines = []
    for key in keys:
        field = table[key]
        lines.append(f"{indent}/** {field.doc} */")
        lines.append(f"{indent}{_name(key)}{'' if field.required else '?'}: {field.ts}")
    return "\n".join(lines)


def _name(key: str) -> str:
    import orjson

    return key if key.isidentifier() else orjson.dumps(key).decode()


def _typed_keys(keys: list[KeyType], indent: str = "    ") -> str:
    return "\n".join(f"{indent}{k.name}{'' if k.required else '?'}: {k.ts}" for k in keys)


def _evaluators() -> str:
    blocks = []
    registry = kinds()
    for kind in registry.values():
        example = _js(kind.example)
        blocks.append(
            f"  /** `{example}` (docs/evaluators.md) */\n"
            f"  export interface {interface_name(kind.name)} {{\n{_typed_keys(kind_keys(kind))}\n  }}"
        )
    union = "\n".join(f"    | {interface_name(name)}" for name in registry)
    csv = "\n".join(
        f"    | {{ {_typed_keys(kind_keys(registry[name], without=frozenset({'expected'})), '').replace(chr(10), '; ')} }}"
        for name in row_kinds()
    )
    return (
        "\n\n".join(blocks)
        + f"\n\n  /** A declarative evaluator: one of the built-in kinds. */\n  export type EvaluatorSpec =\n{union}\n"
        + "\n  /** The evaluator of a CSV eval: a kind that takes `expected` from each row, without `expected`. */\n"
        + f"  export type RowEvaluator =\n{csv}\n"
    )


def _js(value: object) -> str:
    """A JSON value as an author writes it: `{ kind: "exact", expected: "30 days" }`."""
    import orjson

    if isinstance(value, dict):
        inner = ", ".join(f"{_name(k)}: {_js(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list):
        return "[" + ", ".join(_js(v) for v in value) + "]"
    return orjson.dumps(value).decode()


def _data_file_shapes() -> tuple[str, list[str]]:
    """Each data-file format's eval shape, and their names."""
    blocks, names = [], []
    for suffix, source in sources().items():
        name = source.name[:1].upper() + source.name[1:].lower() + "Eval"
        names.append(name)
        if source.expected_from_rows:
            evaluate = (
                "    /** required: a kind that takes `expected` from each row (the rows give it) */\n"
                "    evaluate: RowEvaluator"
            )
        else:
            evaluate = "    evaluate?: Evaluator<Data>"
        blocks.append(
            f"  /** Cases from a {source.name} file beside the eval module. */\n"
            f"  export interface {name}<Data = JsonValue> extends EvalFields<Data> {{\n"
            f'    cases: `${{string}}{suffix}`\n{evaluate}\n    prompt?: never\n  }}'
        )
    return "\n\n".join(blocks), names


def _eval_shapes() -> str:
    if not set(SHAPE_KEYS) <= set(EVAL_KEYS):
        raise ValueError(f"eval keys {EVAL_KEYS} lack a shape key of {SHAPE_KEYS}")
    common = tuple(k for k in EVAL_KEYS if k not in SHAPE_KEYS)
    data_files, data_names = _data_file_shapes()
    shapes = ["PromptEval<Data>", "InlineEval<Data>", *(f"{n}<Data>" for n in data_names), "TransformerEval<Data>"]
    union = "\n".join(f"    | {s}" for s in shapes)
    return f"""  /** What every eval shape has. */
  export interface EvalFields<Data = JsonValue> {{
{typed_fields(EVAL_FIELDS, common, "eval")}
  }}

  /** One case: the eval's ID is the case's. */
  export interface PromptEval<Data = JsonValue> extends EvalFields<Data> {{
    /** {TEXT} */
    prompt: string
    evaluate: Evaluator<Data>
    cases?: never
  }}

  /** Inline cases. */
  export interface InlineEval<Data = JsonValue> extends EvalFields<Data> {{
    /** at least one case */
    cases: Case<Data>[]
    /** the evaluator of the cases that set none */
    evaluate?: Evaluator<Data>
    prompt?: never
  }}

{data_files}

  /** Cases made by a transformer from its source files (docs/transformers.md). */
  export interface TransformerEval<Data = JsonValue> extends EvalFields<Data> {{
    cases: TransformerCases
    evaluate?: Evaluator<Data>
    prompt?: never
  }}

  /**
   * An eval module's default export: `export default {{ … }} satisfies Eval`.
   * `Data` is the type of the cases' `data`, as a custom evaluator receives it.
   */
  export type Eval<Data = JsonValue> =
{union}
"""


def declarations() -> str:
    """The text of trunchbull.d.ts."""
    suffixes = " | ".join(f"`${{string}}{s}`" for s in MODULE_SUFFIXES)
    return f"""// The shapes `trunchbull check` accepts, for editors and `trunchbull check --types`.
// Generated by trunchbull {__version__} from the compiler's own checks; do not edit:
// `trunchbull types > {FILE_NAME}` writes it again. Use it with type-only imports and
// `satisfies`, which esbuild erases, so nothing is imported at run time:
//   import type {{ Eval }} from "{MODULE}"
//   export default {{ … }} satisfies Eval
declare module "{MODULE}" {{
  /** JSON data: what a release holds. */
  export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject
  export type JsonObject = {{ [key: string]: JsonValue }}

  /** A module path, relative to the file that names it. */
  export type ModulePath = {suffixes}

  /** `benchmark.config.ts`: `export default {{ … }} satisfies Config` (read without running it). */
  export interface Config {{
{typed_fields(CONFIG_FIELDS, CONFIG_KEYS, "config")}
  }}

  /** A tool by its release name, or a release tool offered to the model under another name. */
  export type ToolEntry = string | ToolOffer
  export interface ToolOffer {{
{typed_fields(OFFER_FIELDS, OFFER_KEYS, "tools entry")}
  }}

{_evaluators()}
{_custom_evaluator_types()}  /** One case of an eval (inline, a JSONL line, or a transformer's result). */
  export interface Case<Data = JsonValue> {{
{typed_fields(CASE_FIELDS, CASE_KEYS, "case")}
  }}

  /** `cases: {{ transformer, sources }}`. */
  export interface TransformerCases {{
{typed_fields(TRANSFORMER_FIELDS, TRANSFORMER_KEYS, "transformer cases")}
  }}

{_eval_shapes()}
{_tool_and_transformer_types()}}}
"""


def _custom_evaluator_types() -> str:
    """A custom evaluator's function, its arguments and its result."""
    return f"""  /** A custom evaluator: the eval's one `evaluate` function (5 s per call, sandboxed, no network). */
  export type CustomEvaluator<Data = JsonValue> = (args: EvaluatorArgs<Data>) => EvaluatorResult | Promise<EvaluatorResult>
  export type Evaluator<Data = JsonValue> = EvaluatorSpec | CustomEvaluator<Data>

  export interface EvaluatorArgs<Data = JsonValue> {{
{typed_fields(EVALUATOR_ARGS, tuple(EVALUATOR_ARGS), "evaluator arguments")}
  }}

  export interface NormalizedToolCall {{
    toolName: string | null
    input: JsonValue
    /** the input is a JSON object (schema validity is tool_call_syntax's business) */
    valid: boolean
  }}

  export interface Usage {{
    inputTokens?: number | null
    outputTokens?: number | null
    totalTokens?: number | null
  }}

  /** `passed` alone, or with a score in [0, 1] (default 1 or 0), a message and JSON details. */
  export type EvaluatorResult =
    | boolean
    | {{ passed: boolean; score?: number; message?: string | null; details?: JsonValue }}

"""


def _tool_and_transformer_types() -> str:
    """What a tool module and a transformer module export."""
    return f"""  /**
   * A tool module's named export: `export const tools = {{ … }} satisfies Tools`, each an
   * AI SDK `tool({{ description, inputSchema, execute }})` (all three are required).
   */
  export type Tools = {{ [name: string]: Tool }}
  export interface Tool {{
    description?: string | ((...args: any[]) => string)
    inputSchema: unknown
    execute?: (...args: any[]) => unknown
  }}

  /** A transformer module's default export: `export default {{ … }} satisfies Transformer`. */
  export interface Transformer<Data = JsonValue> {{
    /** {ID_DOC} */
    name: string
    transform(sources: {{ [name: string]: TransformerSource }}): Case<Data>[] | Promise<Case<Data>[]>
  }}

  /** A transformer's source file. */
  export interface TransformerSource {{
    /** the file's text (UTF-8) */
    content: string
    /** its path, relative to the benchmark root */
    path: string
    /** the SHA-256 of its bytes, in hex */
    sha256: string
  }}
"""
