"""The TypeScript interface of each declarative evaluator kind, derived from
the kind registry's public fields (its name, allowed keys and example spec)
and from the compile-time check itself (evaluators/specs.py), never written
by hand: a kind added to the registry gets its interface with no edit here.

* a key is required when the check rejects the example without it;
* a key's type is its example value's JSON type, widened (`"41"` is a
  string), plus the other primitive type when the check accepts the same
  value written that way (`expected: 41` for gsm8k), or narrowed to the
  example's literal when the check rejects both neighbours of an integer
  (`version: 1`);
* objects inside a value keep their example keys, typed the same way, and
  accept any other key (`{ toolName: string; [key: string]: JsonValue }`);
* a key the example does not show takes any JSON value."""

from __future__ import annotations

from dataclasses import dataclass

from trunchbull.evaluators.registry import Kind
from trunchbull.evaluators.specs import validate_spec


@dataclass(frozen=True)
class KeyType:
    name: str
    ts: str
    required: bool


def interface_name(kind_name: str) -> str:
    """`tool_call_syntax` → `ToolCallSyntaxEvaluator`."""
    return "".join(part[:1].upper() + part[1:] for part in kind_name.split("_")) + "Evaluator"


def kind_keys(kind: Kind, *, without: frozenset[str] = frozenset()) -> list[KeyType]:
    """The typed keys of one kind's spec (`kind` first, as a literal), in the
    example's order, then the keys the example does not show, sorted."""
    example = kind.example
    ordered = [k for k in example if k in kind.keys] + sorted(k for k in kind.keys if k not in example)
    typed = []
    for key in ordered:
        if key in without:
            continue
        if key == "kind":
            typed.append(KeyType("kind", _literal(kind.name), True))
        elif key not in example:
            typed.append(KeyType(key, "JsonValue", False))
        else:
            typed.append(KeyType(key, _key_type(example, key), not _accepts(_without(example, key))))
    return typed


def _key_type(example: dict, key: str) -> str:
    value = example[key]
    base = _value_type(value)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return base
    if isinstance(value, int) and _rejects(example, key, value - 1) and _rejects(example, key, value + 1):
        return _literal(value)
    other = _other_spelling(value)
    if other is not None and _accepts({**example, key: other}):
        return " | ".join(sorted({base, _value_type(other)}))
    return base


def _other_spelling(value: str | int | float) -> str | int | float | None:
    """The same value as the other primitive type: `"41"` ↔ `41`."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return int(number) if number.is_integer() and "." not in value else number
    return str(value)


def _value_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, list):
        items = sorted({_value_type(item) for item in value})
        if not items:
            return "JsonValue[]"
        if len(items) == 1 and items[0].isidentifier():
            return f"{items[0]}[]"
        return f"Array<{' | '.join(items)}>"
    if isinstance(value, dict):
        fields = "; ".join(f"{_property(k)}: {_value_type(v)}" for k, v in value.items())
        return "{ " + (fields + "; " if fields else "") + "[key: string]: JsonValue }"
    return "JsonValue"


def _property(name: str) -> str:
    return name if name.isidentifier() else _literal(name)


def _literal(value: str | int) -> str:
    import orjson

    return orjson.dumps(value).decode()


def _without(spec: dict, key: str) -> dict:
    return {k: v for k, v in spec.items() if k != key}


def _accepts(spec: dict) -> bool:
    _, problems = validate_spec(spec)
    return not problems


def _rejects(example: dict, key: str, value: object) -> bool:
    return not _accepts({**example, key: value})
