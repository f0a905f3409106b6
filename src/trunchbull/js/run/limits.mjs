// The limits that keep one sample's text within what a record can hold
// (SPEC §8.3; the Python side checks the same rules again: rundir/repair.py):
//
//   * a model's text above `maxResponseBytes` (UTF-8) is cut, for the model's
//     conversation and the record, with a marker saying so (`limitedModel`);
//   * a tool call whose arguments are larger than that, or nested deeper
//     than MAX_ARGUMENT_DEPTH, is not parsed: its arguments are replaced by a
//     sentence saying why, which the AI SDK cannot parse, so that the model
//     gets a tool error (as for any unparsable arguments), and no tool runs;
//   * a tool result above `maxToolResultBytes` (its JSON) is cut the same
//     way (`cappedToolResult`);
//   * a value nested deeper than a record may hold becomes a marker string
//     (`shallow`);
//   * the record's text is made well-formed (a lone UTF-16 surrogate becomes
//     U+FFFD) and the whole line kept within `maxRecordBytes` (`recordLine`).
// Each change is listed in the record's `repaired` (rundir/schema.py REPAIRS).

const stringify = JSON.stringify; // captured before any user code runs
const parse = JSON.parse;
const byteLength = Buffer.byteLength;
const BufferFrom = Buffer.from;
const toWellFormed = String.prototype.toWellFormed;

// A record is at most 64 levels deep (common/jsonl.py MAX_DEPTH); its values
// sit 3 levels down (record → toolCalls → call → input).
export const MAX_VALUE_DEPTH = 60;
export const MAX_ARGUMENT_DEPTH = 48; // tool-call arguments: what a tool schema reasonably nests

function cutMarker(what, size, limit, option) {
  return `\n[trunchbull: ${what} was ${size.toLocaleString("en")} bytes; cut at ${limit.toLocaleString("en")} (${option})]`;
}

// `text` cut to at most `limit` UTF-8 bytes, on a code point boundary.
function cutText(text, limit) {
  // (the first `limit` bytes are within the first `limit` characters: only those are encoded)
  let cut = BufferFrom(text.length > limit ? text.slice(0, limit) : text, "utf8").subarray(0, limit).toString("utf8");
  if (cut.endsWith("\ufffd") && !text.startsWith(cut)) cut = cut.slice(0, -1); // a character cut in two
  return cut;
}

// How deeply the JSON text `text` nests (brackets outside strings), without parsing it.
export function textDepth(text) {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 93 || c === 125) depth--;
  }
  return deepest;
}

function argumentsProblem(input, maxBytes) {
  if (typeof input !== "string") return null;
  if (input.length * 3 > maxBytes && byteLength(input) > maxBytes) {
    return `the arguments are ${byteLength(input).toLocaleString("en")} bytes; the limit is ${maxBytes.toLocaleString("en")} (--max-response-bytes)`;
  }
  if (input.length > 2 * MAX_ARGUMENT_DEPTH) {
    const depth = textDepth(input);
    if (depth > MAX_ARGUMENT_DEPTH) return `the arguments are nested ${depth.toLocaleString("en")} levels deep; the limit is ${MAX_ARGUMENT_DEPTH}`;
  }
  return null;
}

// The model, with its replies held to the limits above. `repairs(params)`:
// the set of repairs of the sample a call belongs to (or null).
export function limitedModel(model, maxResponseBytes, repairs) {
  const limit = (result, params) => {
    for (const part of result.content ?? []) {
      if ((part.type === "text" || part.type === "reasoning") && typeof part.text === "string") {
        if (part.text.length * 3 > maxResponseBytes && byteLength(part.text) > maxResponseBytes) {
          const size = byteLength(part.text);
          part.text = cutText(part.text, maxResponseBytes) + cutMarker("the model's text", size, maxResponseBytes, "--max-response-bytes");
          repairs(params)?.add("output-truncated");
        }
      } else if (part.type === "tool-call") {
        const problem = argumentsProblem(part.input, maxResponseBytes);
        // not JSON, so that the AI SDK reports the call as invalid to the model, with this sentence
        if (problem) part.input = `trunchbull: the tool call was not made: ${problem}`;
      }
    }
    return result;
  };
  const limited = {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    doGenerate: async (params) => limit(await model.doGenerate(params), params),
    doStream: (params) => model.doStream(params),
  };
  if (typeof model.describe === "function") limited.describe = () => model.describe();
  return limited;
}

// A tool's result, cut to `maxBytes` of its JSON when it is larger (the
// model and the record get the cut text, with the marker).
export function cappedToolResult(value, maxBytes, repairs) {
  const { output, cut } = cutToolResult(value, maxBytes);
  if (cut) repairs?.add("tool-result-truncated");
  return output;
}

// What cappedToolResult does, without the record: { output, cut }. The tool
// executor cuts here, before its answer is serialized; a cut output is at
// most maxBytes + TOOL_RESULT_MARKER_ROOM bytes (UTF-8).
export const TOOL_RESULT_MARKER_ROOM = 256;
export function cutToolResult(value, maxBytes) {
  let text;
  if (typeof value === "string") text = value;
  else {
    try {
      text = stringify(value);
    } catch {
      return { output: value, cut: false }; // not JSON: the AI SDK reports it as it would have
    }
    if (text === undefined) return { output: value, cut: false };
  }
  if (text.length * 3 <= maxBytes) return { output: value, cut: false };
  const size = byteLength(text);
  if (size <= maxBytes) return { output: value, cut: false };
  const output = cutText(text, maxBytes) + cutMarker("the tool result", size, maxBytes, "--max-tool-result-bytes");
  return { output, cut: true };
}

// The depth of a JSON value (arrays and objects), walked without recursion; stops past `limit`.
function valueDepth(value, limit) {
  const stack = [[value, 1]];
  let deepest = 0;
  while (stack.length) {
    const [item, level] = stack.pop();
    if (item === null || typeof item !== "object") continue;
    if (level > deepest) deepest = level;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === "object") stack.push([child, level + 1]);
    }
  }
  return deepest;
}

// `value` (plain JSON data) as a record may hold it: a marker string when it nests too deep.
export function shallow(value, repairs) {
  if (value === null || typeof value !== "object") return value;
  if (valueDepth(value, MAX_VALUE_DEPTH) <= MAX_VALUE_DEPTH) return value;
  repairs?.add("too-deep");
  return `[trunchbull: a value nested more than ${MAX_VALUE_DEPTH} levels deep; a record holds ${MAX_VALUE_DEPTH}]`;
}

// Every string (and key) of plain JSON data made well-formed: (value, changed).
function wellFormed(value) {
  if (typeof value === "string") {
    const fixed = toWellFormed.call(value);
    return [fixed, fixed !== value];
  }
  if (value === null || typeof value !== "object") return [value, false];
  let changed = false;
  if (Array.isArray(value)) {
    const out = value.map((item) => {
      const [fixed, c] = wellFormed(item);
      changed ||= c;
      return fixed;
    });
    return [out, changed];
  }
  const out = {};
  for (const [key, item] of Object.entries(value)) {
    const [fixedKey, c1] = wellFormed(key);
    const [fixed, c2] = wellFormed(item);
    changed ||= c1 || c2;
    out[fixedKey] = fixed;
  }
  return [out, changed];
}

// JSON.stringify writes a lone surrogate as an escape (\udXXX) that UTF-8 readers refuse.
const LONE_SURROGATE_ESCAPE = /\\ud[89a-f][0-9a-f]{2}/i;

function withRepair(record, what) {
  const repaired = new Set(record.repaired ?? []);
  repaired.add(what);
  record.repaired = [...repaired].sort();
}

// The largest cuttable part of a record: [size, holder, key], or null.
function largestPart(record) {
  let best = null;
  const consider = (holder, key) => {
    const value = holder[key];
    const size = typeof value === "string" ? value.length : byteLength(stringify(value) ?? "");
    if (size > 64 && (best === null || size > best[0])) best = [size, holder, key];
  };
  consider(record, "output");
  for (const call of record.toolCalls) consider(call, "input");
  for (const result of record.toolResults) consider(result, "output" in result ? "output" : "error");
  if (record.error) consider(record.error, "message");
  return best;
}

// One record as one line of at most `maxBytes` UTF-8 bytes: its text made
// well-formed, then, if it is still too large, its largest parts cut in
// turn (each to half its size, as text with a marker).
export function recordLine(record, maxBytes, toText = stringify) {
  let line = toText(record);
  if (LONE_SURROGATE_ESCAPE.test(line)) {
    const [fixed, changed] = wellFormed(parse(line));
    if (changed) {
      Object.assign(record, fixed);
      withRepair(record, "unencodable-text");
      line = stringify(record);
    }
  }
  if (line.length <= maxBytes / 3 || byteLength(line) <= maxBytes) return line;
  const size = byteLength(line);
  withRepair(record, "record-truncated");
  for (let round = 0; round < 200 && byteLength(line) > maxBytes; round++) {
    const part = largestPart(record);
    if (part === null) break;
    const [partSize, holder, key] = part;
    const text = typeof holder[key] === "string" ? holder[key] : stringify(holder[key]);
    holder[key] = cutText(text, Math.floor(partSize / 2)) + cutMarker("the record", size, maxBytes, "its largest parts were cut");
    line = stringify(record);
  }
  if (byteLength(line) > maxBytes) {
    record.output = "";
    record.toolCalls = [];
    record.toolResults = [];
    record.error = { kind: "record", message: `the sample's record was ${size.toLocaleString("en")} bytes; the limit is ${maxBytes.toLocaleString("en")}` };
    line = stringify(record);
  }
  return line;
}
