// The HTML report's entry point: reads the embedded data, lays out the page
// (header, tabs, transcript panel) and renders each tab the first time it is
// shown. The URL's fragment names what is shown, so a link opens it:
// #tab=cases (a tab), #case=ID (a case: both runs' transcripts with --vs,
// else its first sample in the case table), #case=ID&repeat=N (one sample).
// Bundled at report time with esbuild (see report/bundle.py).
import "./style.css";
import { loadReport } from "./data.js";
import { h } from "./dom.js";
import { renderCases } from "./cases.js";
import { renderCompare } from "./compare.js";
import { renderOverview } from "./overview.js";
import { transcript } from "./transcript.js";

performance.mark("trunchbull:script");
const report = loadReport();
performance.mark("trunchbull:data");
const byLabel = [...report.runs].sort((a, b) => a.label.localeCompare(b.label));

// The transcript panel docks beside the page (which narrows to make room, so
// the case table stays usable); previous / next (buttons, ↑ ↓ or k j) walk
// the table's rows in their current order and filter.
const panelBody = h("div", { class: "panel-body" });
const position = h("span", { class: "muted", "data-testid": "position" });
let nav = null; // { rows, pos, open(pos) } of the list the panel walks
const step = (by) => {
  if (!nav || panel.hidden) return;
  const pos = nav.pos + by;
  if (pos >= 0 && pos < nav.rows.length) nav.open(pos);
};
const permalink = h("a", { "data-testid": "permalink", title: "a link that opens this in the report" }, "link");
const panel = h("aside", { class: "panel", hidden: true, "data-testid": "panel" },
  h("div", { class: "panel-head" }, h("span", { class: "panel-title" }),
    h("span", { class: "panel-nav" }, permalink,
      h("button", { type: "button", "data-testid": "previous", title: "previous (↑ or k)", onclick: () => step(-1) }, "▲ previous"),
      h("button", { type: "button", "data-testid": "next", title: "next (↓ or j)", onclick: () => step(1) }, "next ▼"),
      position,
      h("button", { type: "button", "data-testid": "close", title: "close (Esc)", onclick: () => closePanel() }, "close ✕"))),
  panelBody);

// The fragment of what is shown, kept in the address bar without a history entry per click.
const fragment = (params) => `#${new URLSearchParams(params).toString()}`;
function setFragment(params) {
  history.replaceState(null, "", fragment(params));
}

function closePanel() {
  panel.hidden = true;
  document.body.classList.remove("panel-open");
  nav?.onClose?.();
  setFragment({ tab: current });
}

function openPanel(title, columns, link) {
  permalink.setAttribute("href", fragment(link));
  setFragment(link);
  panel.querySelector(".panel-title").textContent = title;
  panelBody.replaceChildren(h("div", { class: columns.length > 1 ? "columns" : null }, columns));
  panel.hidden = false;
  document.body.classList.add("panel-open");
  panelBody.scrollTop = 0;
  position.textContent = nav ? `${(nav.pos + 1).toLocaleString("en-US")} of ${nav.rows.length.toLocaleString("en-US")}` : "";
}

/** Open sample `i` of `run`; `list` (the table's rows, with `select` to mark one) makes previous / next walk it. */
function openSample(run, i, list) {
  if (list) {
    const rows = list.rows;
    nav = {
      rows, pos: Math.max(0, rows.indexOf(i)), onClose: () => list.select(null),
      open(pos) { this.pos = pos; list.select(rows[pos]); showSample(run, rows[pos]); },
    };
    nav.open(nav.pos);
    return;
  }
  nav = null;
  showSample(run, i);
}

function showSample(run, i) {
  const link = { case: run.caseId(i), repeat: String(run.repeat(i)) };
  if (report.runs.length > 1) link.run = run.label;
  openPanel(`${run.caseId(i)} · repeat ${run.repeat(i)}`, [transcript(run, i)], link);
}

/** Both runs' transcripts of a case; `ids` (the changed cases in order) makes previous / next walk them. */
function openCase(caseId, ids) {
  nav = ids ? { rows: ids, pos: Math.max(0, ids.indexOf(caseId)), open(pos) { this.pos = pos; showCase(ids[pos]); } } : null;
  showCase(caseId);
}

function showCase(caseId) {
  openPanel(`${caseId}: A and B`, byLabel.map((run) => {
    const samples = run.samplesOf(caseId);
    return h("div", { class: "column" }, h("h3", { class: "column-head" }, `${run.label}: ${run.meta.model}`),
      samples.length ? samples.map((i) => transcript(run, i)) : h("p", { class: "muted" }, "this run has no sample of the case"));
  }), { case: caseId });
}

// Who judged the run's model-graded kinds; a judge that is the model under test is marked.
function judgeLine(judge) {
  if (!judge || !judge.models.length) return null;
  const self = judge.selfJudged.length > 0;
  return h("div", { class: self ? "warning" : "muted", "data-testid": "judges", "data-self-judged": self ? "true" : "false" },
    `judged by ${judge.models.join(", ")}`,
    self ? ` · self-judged: ${judge.selfJudged.join(", ")} is the model under test (--allow-self-judge)` : "");
}

function runLine(run) {
  const release = run.meta.release || {};
  return h("div", { class: "run-line" },
    report.runs.length > 1 ? h("strong", {}, `${run.label} `) : null,
    h("code", {}, run.meta.model), run.meta.baseUrl ? h("span", { class: "muted" }, ` at ${run.meta.baseUrl}`) : null,
    ` on ${release.title || "release"}${release.version ? ` ${release.version}` : ""} `,
    h("span", { class: "muted" }, `${release.digest || ""} · ${run.meta.runDir} · ${run.meta.startedAt || ""}`),
    judgeLine(run.meta.judge),
    run.note ? h("div", { class: "warning", "data-testid": "note" }, run.note) : null);
}

let caseTables = null; // the case tab's tables, once rendered
const tabs = [
  ...(report.comparison ? [["compare", "Comparison", (s) => renderCompare(s, report, openCase)]] : []),
  ["overview", "Overview", (s) => renderOverview(s, { ...report, runs: byLabel })],
  ["cases", "Cases", (s) => { caseTables = renderCases(s, report, openSample); }],
];
const sections = {};
const buttons = {};
let current = null;
function show(id) {
  current = id;
  for (const [key, , render] of tabs) {
    const active = key === id;
    buttons[key].classList.toggle("active", active);
    if (active && !sections[key].dataset.rendered) {
      sections[key].dataset.rendered = "1";
      sections[key].hidden = false;
      render(sections[key]);
    }
    sections[key].hidden = !active;
  }
}
function showTab(id) {
  show(id);
  if (!panel.hidden) closePanel();
  else setFragment({ tab: id });
}
for (const [key, label] of tabs) {
  sections[key] = h("section", { class: "tab", id: `tab-${key}`, "data-testid": `tab-${key}`, hidden: true });
  buttons[key] = h("button", { type: "button", class: "tab-button", "data-tab": key, onclick: () => showTab(key) }, label);
}

/** Show what the URL's fragment names; false when it names nothing this report has. */
function followFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const tab = params.get("tab");
  const caseId = params.get("case");
  if (caseId !== null) {
    if (report.comparison && params.get("repeat") === null) {
      show("compare");
      const ids = report.comparison.changedCases.map((c) => c.caseId);
      openCase(caseId, ids.includes(caseId) ? ids : null);
      return true;
    }
    show("cases");
    return caseTables.open(caseId, params.get("repeat"), params.get("run"));
  }
  if (tab && tab in sections) {
    show(tab);
    return true;
  }
  return false;
}

document.body.append(
  h("header", { class: "page-head" }, h("h1", {}, report.title), report.runs.map(runLine)),
  h("nav", { class: "tabs" }, tabs.map(([key]) => buttons[key])),
  h("main", {}, tabs.map(([key]) => sections[key])),
  panel,
  h("footer", { class: "muted" }, `Generated by ${report.generator}.`),
);
document.addEventListener("keydown", (e) => {
  if (panel.hidden || e.target.matches?.("input, select, textarea")) return;
  if (e.key === "Escape") closePanel();
  else if (e.key === "ArrowDown" || e.key === "j") { e.preventDefault(); step(1); }
  else if (e.key === "ArrowUp" || e.key === "k") { e.preventDefault(); step(-1); }
});
if (!location.hash || !followFragment()) show(tabs[0][0]);
window.addEventListener("hashchange", () => followFragment());
performance.mark("trunchbull:ready");
window.trunchbullReadyAt = performance.now();
document.body.dataset.ready = "1";
