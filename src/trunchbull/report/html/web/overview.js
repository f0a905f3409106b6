// The overview: per-eval summary of each run (summary.json, as the terminal
// prints it) and the charts.
import { append, h, int, interval, ms, num, pct } from "./dom.js";
import { latencyPlot, passRatePlot, scorePlot, tokensPlot } from "./plots.js";

function summaryTable(run) {
  const rows = [...Object.entries(run.summary.evals), ["overall", run.summary.overall]];
  return h("table", { class: "summary", "data-testid": "summary", "data-run": run.index },
    h("thead", {}, h("tr", {}, ["eval", "samples", "pass", "fail", "error", "pass rate", "95% CI", "mean score",
      "tokens", "cost", "p50", "p90"].map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.map(([evalId, g]) => h("tr", { class: evalId === "overall" ? "overall" : null },
      h("td", {}, evalId),
      h("td", { class: "n" }, int(g.samples)),
      h("td", { class: "n" }, int(g.passed)),
      h("td", { class: "n" }, int(g.failed)),
      h("td", { class: g.errors ? "n error" : "n" }, int(g.errors)),
      h("td", { class: "n", "data-testid": "rate", "data-run": run.index, "data-eval": evalId, "data-value": g.passRate }, pct(g.passRate)),
      h("td", { class: "n muted" }, interval(g.passRateCI)),
      h("td", { class: "n" }, num(g.meanScore)),
      h("td", { class: "n" }, int(g.tokens.total)),
      h("td", { class: "n", "data-testid": "cost" }, g.cost === null || g.cost === undefined ? "unknown" : `$${g.cost.toFixed(4)}`),
      h("td", { class: "n" }, ms(g.latencyMs.p50)),
      h("td", { class: "n" }, ms(g.latencyMs.p90)),
    ))));
}

/** With --by: the run's figures per group, the macro average and the overall (micro) row. */
function breakdownTable(run) {
  const b = run.breakdown;
  if (!b) return null;
  const rows = Object.entries(b.groups);
  return h("div", { class: "breakdown" },
    h("h3", {}, `By ${b.by} (${int(rows.length)} groups)`),
    h("table", { class: "summary", "data-testid": "breakdown", "data-run": run.index, "data-by": b.by },
      h("thead", {}, h("tr", {}, [b.by, "cases", "samples", "pass rate", "95% CI", "mean score", "tokens", "cost"]
        .map((c) => h("th", {}, c)))),
      h("tbody", {},
        rows.map(([value, g]) => h("tr", { "data-testid": "group-row", "data-group": value },
          h("td", {}, value), h("td", { class: "n" }, int(g.cases)), h("td", { class: "n" }, int(g.samples)),
          h("td", { class: "n", "data-testid": "group-rate", "data-value": g.passRate }, pct(g.passRate)),
          h("td", { class: "n muted" }, interval(g.passRateCI)), h("td", { class: "n" }, num(g.meanScore)),
          h("td", { class: "n" }, int(g.tokens.total)),
          h("td", { class: "n" }, g.cost === null || g.cost === undefined ? "unknown" : `$${g.cost.toFixed(4)}`))),
        h("tr", { class: "overall", "data-testid": "macro-row" }, h("td", {}, `macro (${int(b.macro.groups)} groups alike)`),
          h("td", {}), h("td", {}), h("td", { class: "n", "data-value": b.macro.passRate }, pct(b.macro.passRate)), h("td", {}),
          h("td", { class: "n" }, num(b.macro.meanScore)), h("td", {}), h("td", {})),
        h("tr", { class: "overall" }, h("td", {}, "overall (micro: every case alike)"), h("td", { class: "n" }, int(b.overall.cases)),
          h("td", { class: "n" }, int(b.overall.samples)), h("td", { class: "n" }, pct(b.overall.passRate)),
          h("td", { class: "n muted" }, interval(b.overall.passRateCI)), h("td", { class: "n" }, num(b.overall.meanScore)),
          h("td", { class: "n" }, int(b.overall.tokens.total)), h("td", {})))));
}

function passAtK(run) {
  const o = run.summary.overall;
  if (!o.passAtK) return null;
  const ks = Object.entries(o.passAtK).map(([k, v]) => `pass@${k} ${pct(v)}`).join(" · ");
  return h("p", { class: "muted" }, `${ks} · pass^${Object.keys(o.passAtK).length} ${pct(o.passHatK)}`);
}

function figure(title, chart) {
  return h("figure", {}, h("figcaption", {}, title), chart);
}

export function renderOverview(section, report) {
  const { runs } = report;
  const empty = (text) => h("p", { class: "muted empty" }, text);
  append(section, [
    h("div", { class: runs.length > 1 ? "side-by-side" : null }, runs.map((run) => h("div", { class: "run-summary" },
      h("h2", {}, runs.length > 1 ? `${run.label}: ${run.meta.model}` : "Summary"),
      summaryTable(run),
      passAtK(run),
      breakdownTable(run),
    ))),
    h("div", { class: "charts" },
      figure("Pass rate per eval, 95% confidence interval", passRatePlot(runs)),
      figure("Score distribution", scorePlot(runs, empty("no graded samples"))),
      figure("Latency distribution", latencyPlot(runs, empty("no latency recorded (recorded responses were not timed)"))),
      figure("Tokens per eval", tokensPlot(runs, empty("no token usage recorded"))),
    ),
  ]);
}
