// The report's data: the JSON the generator embeds in <script
// id="trunchbull-data">, decoded into runs whose samples are read by index
// from compact columns (strings are indices into one shared table).
import { OUTCOMES } from "./dom.js";

export function loadReport() {
  const raw = JSON.parse(document.getElementById("trunchbull-data").textContent);
  const strings = raw.strings;
  const str = (i) => (i === null || i < 0 ? null : strings[i]);
  const cases = {
    count: raw.cases.id.length,
    id: (c) => strings[raw.cases.id[c]],
    evalId: (c) => strings[raw.cases.eval[c]],
    prompt: (c) => str(raw.cases.prompt[c]),
    system: (c) => str(raw.cases.system[c]),
  };
  const runs = raw.runs.map((run, index) => new Run(run, index, str, cases));
  return { title: raw.title, runs, cases, comparison: raw.comparison, generator: raw.generator };
}

export class Run {
  constructor(raw, index, str, cases) {
    this.index = index;
    this.label = raw.label;
    this.meta = raw.meta;
    this.summary = raw.summary;
    this.breakdown = raw.breakdown || null;
    this.note = raw.note;
    this.cases = cases;
    this.str = str;
    this.c = raw.samples;
    this.count = raw.samples.case.length;
    this._byCase = null;
    this._haystack = null;
  }
  caseIndex(i) { return this.c.case[i]; }
  caseId(i) { return this.cases.id(this.c.case[i]); }
  evalId(i) { return this.cases.evalId(this.c.case[i]); }
  repeat(i) { return this.c.repeat[i]; }
  outcome(i) { return OUTCOMES[this.c.outcome[i]]; }
  score(i) { return this.c.score[i]; }
  latency(i) { return this.c.latency[i]; }
  tokens(i) { return { input: this.c.tokIn[i], output: this.c.tokOut[i], total: this.c.tokTotal[i] }; }
  output(i) { return this.str(this.c.output[i]); }
  message(i) { return this.str(this.c.message[i]); }
  evaluator(i) { return this.str(this.c.evaluator[i]); }
  finishReason(i) { return this.str(this.c.finish[i]); }
  steps(i) { return this.c.steps[i]; }
  attempts(i) { return this.c.attempts[i]; }
  cached(i) { return this.c.cached[i] === 1; }
  recorded(i) { return this.c.recorded[i] === 1; }
  error(i) { const e = this.str(this.c.error[i]); return e === null ? null : JSON.parse(e); }
  details(i) { const d = this.str(this.c.details[i]); return d === null ? null : JSON.parse(d); }
  tools(i) { const t = this.str(this.c.tools[i]); return t === null ? { calls: [], results: [] } : JSON.parse(t); }
  prompt(i) { return this.cases.prompt(this.c.case[i]); }
  system(i) { return this.cases.system(this.c.case[i]); }

  /** What the table's text search looks in: prompt and output, lower case. */
  haystack(i) {
    if (!this._haystack) this._haystack = new Array(this.count);
    let text = this._haystack[i];
    if (text === undefined) {
      text = `${this.prompt(i) || ""}\n${this.output(i) || ""}`.toLowerCase();
      this._haystack[i] = text;
    }
    return text;
  }

  /** The sample indices of a case ID (its repeats), in order. */
  samplesOf(caseId) {
    if (!this._byCase) {
      this._byCase = new Map();
      for (let i = 0; i < this.count; i++) {
        const id = this.caseId(i);
        const list = this._byCase.get(id);
        if (list) list.push(i);
        else this._byCase.set(id, [i]);
      }
    }
    return this._byCase.get(caseId) || [];
  }
}
