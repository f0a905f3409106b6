"""gsm8k answer extraction and number normalization (SPEC §4).

The extracted answer is the first number after the last `####` when the output
has a `####` followed by a number, else the last number in the output. A
number is an optional sign, an optional `$`, digits (plain, or grouped in
threes with commas), an optional fractional part and an optional `%`. This
avoids the known pitfalls of regex-based extraction:

* `#### $72` is 72 (the `$` is not part of the number);
* `18.00` equals `18` (trailing fractional zeros are dropped);
* `The answer is 72.` is 72 (a sentence period is never part of a number: a
  fractional part needs a digit after the dot);
* `...` and lone punctuation are not numbers (a number needs a digit);
* `1,2,3` is three numbers, not 123 (commas only group thousands);
* `3-5` is 3 and 5, not 3 and -5 (a sign must not follow a letter or digit).
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

# sign: not right after a word character, a dot or a closing bracket.
# integer part: 1-3 digits + comma groups of exactly 3, or plain digits, or
# nothing when the number starts with the dot (".5").
_NUMBER = re.compile(
    r"(?P<sign>(?<![\w.)\]])[-+\u2212])?"
    r"(?P<dollar>\$)?"
    r"(?P<int>[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+|(?<![\w.])(?=\.[0-9]))"
    r"(?P<frac>\.[0-9]+)?"
    r"(?P<pct>%)?"
)
_MARKER = "####"


class Extraction(NamedTuple):
    answer: str | None  # normalized number string, None when no number was found
    raw: str | None  # the text the number was read from
    method: str  # "after ####" | "last number" | "none"


def normalize_number(sign: str, integer: str, fraction: str) -> str:
    """`-0012.500` → `-12.5`; `,` removed, no leading zeros, no trailing
    fractional zeros, no `+`, `-0` is `0`."""
    integer = integer.replace(",", "").lstrip("0") or "0"
    fraction = fraction[1:].rstrip("0") if fraction else ""
    text = f"{integer}.{fraction}" if fraction else integer
    if sign in ("-", "\u2212") and text != "0":
        return "-" + text
    return text


def _number(match: re.Match) -> str:
    return normalize_number(match["sign"] or "", match["int"], match["frac"] or "")


def extract_gsm8k(output: str) -> Extraction:
    text = unicodedata.normalize("NFKC", output) if not output.isascii() else output
    marker = text.rfind(_MARKER)
    if marker >= 0:
        match = _NUMBER.search(text, marker + len(_MARKER))
        if match:
            return Extraction(_number(match), match.group(0), "after ####")
    last = None
    for last in _NUMBER.finditer(text):
        pass
    if last is None:
        return Extraction(None, None, "none")
    return Extraction(_number(last), last.group(0), "last number")
