// The case table: every sample of a run, sortable and filterable (eval,
// outcome, text in prompt and output). Sorting and filtering work on arrays
// of sample indices (a sort order is computed once per column and direction,
// a filter is one pass over it); TanStack Virtual keeps only the rows in
// view in the DOM.
import { Virtualizer, elementScroll, observeElementOffset, observeElementRect } from "@tanstack/virtual-core";
import { h, int, num, OUTCOMES } from "./dom.js";

const ROW_HEIGHT = 30;
const SHOWN = ["eval", "case", "repeat", "outcome", "score", "latency", "tokens", "message", "output"];
// the sort key of each sortable column (null and undefined sort last)
const KEYS = {
  eval: (run, i) => run.evalId(i),
  case: (run, i) => run.caseId(i),
  repeat: (run, i) => run.repeat(i),
  outcome: (run, i) => run.c.outcome[i],
  score: (run, i) => run.score(i),
  latency: (run, i) => run.latency(i),
  tokens: (run, i) => run.tokens(i).total,
  message: (run, i) => run.message(i),
};
const NUMERIC = new Set(["repeat", "score", "latency", "tokens"]);

function cell(run, id, i) {
  switch (id) {
    case "eval": return run.evalId(i);
    case "case": return run.caseId(i);
    case "repeat": return String(run.repeat(i));
    case "outcome": return h("span", { class: `chip ${run.outcome(i)}` }, run.outcome(i));
    case "score": return num(run.score(i), 2);
    case "latency": return run.latency(i) === null ? "–" : `${Math.round(run.latency(i)).toLocaleString("en-US")} ms`;
    case "tokens": return int(run.tokens(i).total);
    case "message": return (run.message(i) || "").slice(0, 200);
    case "output": return (run.output(i) || "").slice(0, 200);
    default: return "";
  }
}

/** The sample indices of `run` in the order of column `id` (ascending). */
function sortedBy(run, id) {
  const key = KEYS[id];
  const keys = new Array(run.count);
  for (let i = 0; i < run.count; i++) keys[i] = key(run, i);
  const order = Array.from({ length: run.count }, (_, i) => i);
  order.sort((a, b) => {
    const x = keys[a], y = keys[b];
    if (x === y) return a - b;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return x < y ? -1 : 1;
  });
  return order;
}

/** A table of one run's samples; `onOpen(run, i)` opens a sample. */
class CaseTable {
  constructor(run, onOpen) {
    this.run = run;
    this.onOpen = onOpen;
    this.sort = null; // {id, desc}
    this.selected = null; // the sample shown in the transcript panel
    this.orders = new Map();
    this.filters = { eval: "", outcome: "", text: "" };
    this.rows = Array.from({ length: run.count }, (_, i) => i);
    this.el = h("div", { class: "case-table", "data-run": run.index });
    this.header = h("div", { class: "row head" });
    this.spacer = h("div", { class: "spacer" });
    this.body = h("div", { class: "body", "data-testid": "case-rows" }, this.spacer);
    this.el.append(this.header, this.body);
    this.virtualizer = new Virtualizer({
      count: this.rows.length, getScrollElement: () => this.body, estimateSize: () => ROW_HEIGHT, overscan: 12,
      scrollToFn: elementScroll, observeElementRect, observeElementOffset, onChange: () => this.renderRows(),
      initialRect: { width: 1000, height: 600 },
    });
    this.renderHeader();
  }

  mount() {
    this.virtualizer._didMount();
    this.virtualizer._willUpdate();
    this.renderRows();
  }

  setFilters(filters) {
    this.filters = { ...filters };
    this.update();
  }

  toggleSort(id) {
    // ascending, then descending (numbers: descending first), then release order
    const first = NUMERIC.has(id);
    if (!this.sort || this.sort.id !== id) this.sort = { id, desc: first };
    else if (this.sort.desc === first) this.sort = { id, desc: !first };
    else this.sort = null;
    this.update();
  }

  update() {
    const run = this.run;
    let order;
    if (this.sort) {
      if (!this.orders.has(this.sort.id)) this.orders.set(this.sort.id, sortedBy(run, this.sort.id));
      order = this.orders.get(this.sort.id);
    }
    const n = run.count;
    const { eval: evalId, outcome, text } = this.filters;
    const outcomeCode = outcome ? OUTCOMES.indexOf(outcome) : -1;
    const needle = text.trim().toLowerCase();
    const rows = [];
    for (let k = 0; k < n; k++) {
      const j = order ? (this.sort.desc ? order[n - 1 - k] : order[k]) : k;
      if (outcomeCode >= 0 && run.c.outcome[j] !== outcomeCode) continue;
      if (evalId && run.evalId(j) !== evalId) continue;
      if (needle && !run.haystack(j).includes(needle)) continue;
      rows.push(j);
    }
    this.rows = rows;
    this.virtualizer.setOptions({ ...this.virtualizer.options, count: rows.length });
    this.body.scrollTop = 0;
    this.renderHeader();
    this.renderRows();
    this.onChange?.();
  }

  renderHeader() {
    this.header.replaceChildren(...SHOWN.map((id) => {
      const sorted = this.sort && this.sort.id === id ? (this.sort.desc ? "desc" : "asc") : null;
      const sortable = id in KEYS;
      return h("div", {
        class: `cell ${id}${sortable ? " sortable" : ""}`, "data-col": id,
        "aria-sort": sorted ? (sorted === "asc" ? "ascending" : "descending") : null,
        onclick: sortable ? () => this.toggleSort(id) : null,
      }, id, sorted ? (sorted === "asc" ? " ▲" : " ▼") : "");
    }));
  }

  /** Mark sample `i` (null: none) as the one the panel shows, and keep it in view. */
  select(i) {
    this.selected = i;
    const index = i === null ? -1 : this.rows.indexOf(i);
    if (index >= 0) this.virtualizer.scrollToIndex(index, { align: "auto" });
    this.renderRows();
  }

  renderRows() {
    const items = this.virtualizer.getVirtualItems();
    this.spacer.style.height = `${this.virtualizer.getTotalSize()}px`;
    const nodes = [this.spacer];
    for (const item of items) {
      const i = this.rows[item.index];
      if (i === undefined) continue;
      nodes.push(h("div", {
        class: i === this.selected ? "row selected" : "row", "data-case": this.run.caseId(i), "data-sample": i,
        style: { transform: `translateY(${item.start}px)` },
        onclick: () => this.onOpen(this.run, i, this),
      }, SHOWN.map((id) => h("div", { class: `cell ${id}` }, cell(this.run, id, i)))));
    }
    this.body.replaceChildren(...nodes);
  }
}

export function renderCases(section, report, openSample) {
  const { runs } = report;
  const tables = runs.map((run) => new CaseTable(run, openSample));
  let current = tables[0];
  const count = h("span", { class: "muted", "data-testid": "case-count" });
  const showCount = () => {
    count.textContent = `${current.rows.length.toLocaleString("en-US")} of ${current.run.count.toLocaleString("en-US")} samples`;
    count.dataset.count = current.rows.length;
  };
  tables.forEach((t) => { t.onChange = showCount; });
  const evalIds = [...new Set(runs.flatMap((r) => Object.keys(r.summary.evals)))];
  const filters = { eval: "", outcome: "", text: "" };
  const apply = () => current.setFilters(filters);
  const holder = h("div", { class: "table-holder" }, current.el);
  const controls = h("div", { class: "controls" },
    runs.length > 1 ? h("select", { "data-testid": "run-select", onchange: (e) => {
      current = tables[Number(e.target.value)];
      holder.replaceChildren(current.el);
      current.mount();
      apply();
      showCount();
    } }, runs.map((run) => h("option", { value: run.index }, `${run.label}: ${run.meta.model}`))) : null,
    h("select", { "data-testid": "eval-filter", onchange: (e) => { filters.eval = e.target.value; apply(); } },
      h("option", { value: "" }, "all evals"), evalIds.map((id) => h("option", { value: id }, id))),
    h("select", { "data-testid": "outcome-filter", onchange: (e) => { filters.outcome = e.target.value; apply(); } },
      h("option", { value: "" }, "all outcomes"), OUTCOMES.map((o) => h("option", { value: o }, o))),
    h("input", { type: "search", placeholder: "search prompts and outputs", "data-testid": "search",
      oninput: (e) => { filters.text = e.target.value; apply(); } }),
    count,
  );
  section.append(controls, holder);
  current.mount();
  showCount();
  return {
    /** Open the sample of `caseId` (its `repeat`, else its first) in the table of the run labelled `label`
     * (else the one shown); false when that run has no such sample. */
    open(caseId, repeat, label) {
      const wanted = tables.find((t) => t.run.label === label) || current;
      const samples = wanted.run.samplesOf(caseId);
      const i = repeat === null ? samples[0] : samples.find((j) => String(wanted.run.repeat(j)) === repeat);
      if (i === undefined) return false;
      if (wanted !== current) {
        const select = section.querySelector("[data-testid=run-select]");
        if (select) select.value = String(wanted.run.index);
        current = wanted;
        holder.replaceChildren(current.el);
        current.mount();
        apply();
        showCount();
      }
      openSample(current.run, i, current.rows.includes(i) ? current : null); // a filter may hide it
      return true;
    },
  };
}
