// The answer letter, read as Inspect AI 0.3.285 reads it: its multiple_choice() solver's
// parse_answers (single answer) and its choice() scorer (inspect_ai/solver/_multiple_choice.py,
// inspect_ai/scorer/_choice.py). The case passes when exactly the correct letter was chosen.
//
// The regular expressions are Python's, written out for JavaScript so they mean the same thing:
// Python's \s, \d and \w are Unicode-aware (PY_S, \p{Nd}, PY_W below), its `.`-free patterns need
// no care, `^`/`$` under re.MULTILINE see only "\n" as a line break (JavaScript's m flag would also
// break at "\r", U+2028 and U+2029), and (?i) on [A-Za-z] also matches the four non-ASCII
// letters that case-fold into that range (İ ı ſ K).

const PY_S = "[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
const PY_W = "[\\p{L}\\p{N}_]"
const D = "\\p{Nd}"
const ALNUM = `A-Za-z${D}` // [A-Za-z\d] without (?i)
const ALNUM_I = `A-Za-z\\u0130\\u0131\\u017F\\u212A${D}` // [A-Za-z\d] under (?i)
const ANSWER_I = "[Aa][Nn][Ss\\u017F][Ww][Ee][Rr]" // ANSWER under (?i)
const LINE_START = "(?:^|(?<=\\n))" // ^ under re.MULTILINE
const LINE_END = "(?=\\n|$)" // $ under re.MULTILINE

// The wrappers parse_answers removes first: $B$, **B**, and (B) after a colon or comma.
const DOLLARS = new RegExp(`\\$${PY_S}*([${ALNUM}][${ALNUM} ,]*?)${PY_S}*\\$`, "gu")
const BOLD = new RegExp(`\\*\\*${PY_S}*([${ALNUM}][${ALNUM} ,]*?)${PY_S}*\\*\\*`, "gu")
const PARENS = new RegExp(`(^|[:,])(${PY_S}*)\\(([${ALNUM_I}])\\)(?=${PY_S}*(?:,|\\.|\\n|$))`, "gu")
// A line that is exactly `ANSWER: <letters>` (the last such line wins), else `ANSWER: <letters>` anywhere.
const STRICT = new RegExp(`${LINE_START}${ANSWER_I}${PY_S}*:${PY_S}*([${ALNUM_I} ,]+)${PY_S}*(?:${LINE_END}|\\n|\\.)`, "gu")
const LENIENT = new RegExp(`${ANSWER_I}${PY_S}*:${PY_S}*([${ALNUM_I} ,]+)(?:(?!${PY_W})[\\s\\S]|\\n|(?=\\n?$)|\\.)`, "gu")
const PY_STRIP = new RegExp(`^${PY_S}+|${PY_S}+$`, "gu")

const OPTIONS = new Set(["A", "B", "C", "D"])

/** The letter the response chose, as Inspect's parse_answers(state, multiple_correct=False) reads it; null when none. */
export function parseAnswer(completion: string): string | null {
  let text = completion.replace(DOLLARS, "$1").replace(BOLD, "$1").replace(PARENS, "$1$2$3")
  let matches = [...text.matchAll(STRICT)].map((m) => m[1])
  if (!matches.length) matches = [...text.matchAll(LENIENT)].map((m) => m[1])
  if (!matches.length) return null
  let matched = matches[matches.length - 1].replace(PY_STRIP, "")
  while (matched.endsWith(".")) matched = matched.slice(0, -1)
  matched = matched.toUpperCase()
  const tokens = matched.split(",").filter((token) => token)
  return tokens.length === 1 && OPTIONS.has(tokens[0]) ? tokens[0] : null
}

export function evaluate({ output, caseData }: { output: string; caseData: { answer: string } }) {
  const chosen = parseAnswer(output)
  const passed = chosen === caseData.answer
  const message =
    chosen === null
      ? `no answer letter (the response has no line 'ANSWER: <letter>'); the answer is ${caseData.answer}`
      : `chose ${chosen}; the answer is ${caseData.answer}`
  return { passed, message, details: { chosen } }
}
