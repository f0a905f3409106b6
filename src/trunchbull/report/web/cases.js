// The case table: every sample of a run, sortable and filterable (eval,
// outcome, text in prompt and output), with TanStack Table for the row model
// and TanStack Virtual so that only the rows in view are in the DOM.
import { createTable, getCoreRowModel, getFilteredRowModel, getSortedRowModel } from "@tanstack/table-core";
import { Virtualizer, elementScroll, observeElementOffset, observeElementRect } from "@tanstack/virtual-core";
import { h, int, num, OUTCOMES } from "./dom.js";

const ROW_HEIGHT = 30;
const equals = (row, id, value) => row.getValue(id) === value;
const contains = (row, id, value) => row.getValue(id).includes(value);

function columns(run) {
  return [
    { id: "eval", header: "eval", accessorFn: (i) => run.evalId(i), filterFn: equals },
    { id: "case", header: "case", accessorFn: (i) => run.caseId(i) },
    { id: "repeat", header: "repeat", accessorFn: (i) => run.repeat(i) },
    { id: "outcome", header: "outcome", accessorFn: (i) => run.outcome(i), filterFn: equals },
    { id: "score", header: "score", accessorFn: (i) => run.score(i) ?? undefined, sortUndefined: "last" },
    { id: "latency", header: "latency", accessorFn: (i) => run.latency(i) ?? undefined, sortUndefined: "last" },
    { id: "tokens", header: "tokens", accessorFn: (i) => run.tokens(i).total ?? undefined, sortUndefined: "last" },
    { id: "output", header: "output", accessorFn: (i) => run.output(i) || "", enableSorting: false },
    { id: "text", accessorFn: (i) => run.haystack(i), filterFn: contains, enableSorting: false },
  ];
}
const SHOWN = ["eval", "case", "repeat", "outcome", "score", "latency", "tokens", "output"];

function cell(run, id, i) {
  switch (id) {
    case "eval": return run.evalId(i);
    case "case": return run.caseId(i);
    case "repeat": return String(run.repeat(i));
    case "outcome": return h("span", { class: `chip ${run.outcome(i)}` }, run.outcome(i));
    case "score": return num(run.score(i), 2);
    case "latency": return run.latency(i) === null ? "–" : `${Math.round(run.latency(i)).toLocaleString("en-US")} ms`;
    case "tokens": return int(run.tokens(i).total);
    case "output": return (run.output(i) || "").slice(0, 200);
    default: return "";
  }
}

/** A table of one run's samples; `onOpen(run, i)` opens a sample. */
class CaseTable {
  constructor(run, onOpen) {
    this.run = run;
    this.onOpen = onOpen;
    const data = Array.from({ length: run.count }, (_, i) => i);
    this.table = createTable({
      data, columns: columns(run), state: {}, onStateChange: () => {}, renderFallbackValue: null,
      getCoreRowModel: getCoreRowModel(), getFilteredRowModel: getFilteredRowModel(), getSortedRowModel: getSortedRowModel(),
    });
    this.state = { ...this.table.initialState };
    this.table.setOptions((prev) => ({ ...prev, state: this.state, onStateChange: (updater) => this.update(updater) }));
    this.el = h("div", { class: "case-table", "data-run": run.index });
    this.header = h("div", { class: "row head" });
    this.spacer = h("div", { class: "spacer" });
    this.body = h("div", { class: "body", "data-testid": "case-rows" }, this.spacer);
    this.el.append(this.header, this.body);
    this.rows = this.table.getRowModel().rows;
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

  update(updater) {
    this.state = typeof updater === "function" ? updater(this.state) : updater;
    this.table.setOptions((prev) => ({ ...prev, state: this.state }));
    this.rows = this.table.getRowModel().rows;
    this.virtualizer.setOptions({ ...this.virtualizer.options, count: this.rows.length });
    this.virtualizer.scrollToOffset(0);
    this.renderHeader();
    this.renderRows();
    this.onChange?.();
  }

  setFilter(id, value) {
    const column = this.table.getColumn(id);
    column.setFilterValue(value === "" || value === null ? undefined : value);
  }

  renderHeader() {
    this.header.replaceChildren(...SHOWN.map((id) => {
      const column = this.table.getColumn(id);
      const sorted = column.getIsSorted();
      return h("div", {
        class: `cell ${id}${column.getCanSort() ? " sortable" : ""}`, "data-col": id, "aria-sort": sorted ? (sorted === "asc" ? "ascending" : "descending") : null,
        onclick: column.getCanSort() ? column.getToggleSortingHandler() : null,
      }, id, sorted ? (sorted === "asc" ? " ▲" : " ▼") : "");
    }));
  }

  renderRows() {
    const items = this.virtualizer.getVirtualItems();
    this.spacer.style.height = `${this.virtualizer.getTotalSize()}px`;
    const nodes = [this.spacer];
    for (const item of items) {
      const i = this.rows[item.index].original;
      nodes.push(h("div", {
        class: "row", "data-case": this.run.caseId(i), "data-sample": i, style: { transform: `translateY(${item.start}px)` },
        onclick: () => this.onOpen(this.run, i),
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
  const apply = () => {
    current.setFilter("eval", filters.eval);
    current.setFilter("outcome", filters.outcome);
    current.setFilter("text", filters.text.trim().toLowerCase());
  };
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
}
