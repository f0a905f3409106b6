// The comparison of RUN_DIR (B) against its baseline (A): the paired
// differences per eval with their 95% CIs, then the changed cases,
// regressions first, each opening both runs' transcripts side by side.
import { append, h, int, interval, num, pct, signed } from "./dom.js";
import { differencePlot } from "./plots.js";

function verdict(overall) {
  const ci = overall.ci;
  if (!ci) return ["neutral", "too few shared cases for an interval"];
  if (ci[1] < 0) return ["worse", "B is significantly worse than A (the 95% CI of B − A is below 0)"];
  if (ci[0] > 0) return ["better", "B is significantly better than A (the 95% CI of B − A is above 0)"];
  return ["neutral", "no significant difference (the 95% CI of B − A contains 0)"];
}

function power(overall) {
  const ci = overall.ci;
  if (!ci || ci[0] > 0 || ci[1] < 0 || !overall.mdd80) return null;
  return h("p", { class: "muted", "data-testid": "power" }, `Not significant is not "no change": with ${int(overall.n)} cases a `,
    `true difference of ±${num(overall.mdd80)} would be detected 4 times in 5; ±${num(overall.mdd80 / 2)} needs about `,
    `${int(4 * overall.n)} cases.`);
}

function differences(comparison, groups = null) {
  const rows = [...Object.entries(groups ? comparison.groups : comparison.evals), ["overall", comparison.overall]];
  return h("table", { class: "summary", "data-testid": groups ? "group-differences" : "differences" },
    h("thead", {}, h("tr", {}, [groups ? comparison.by : "eval", "cases", "A mean", "B mean", "B − A", "95% CI", "MDD80", "regressed", "fixed",
      "unchanged", "left out"].map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.map(([evalId, g]) => h("tr", { class: evalId === "overall" ? "overall" : null, "data-eval": evalId },
      h("td", {}, evalId), h("td", { class: "n" }, int(g.n)), h("td", { class: "n" }, num(g.meanA)),
      h("td", { class: "n" }, num(g.meanB)),
      h("td", { class: "n", "data-testid": "difference", "data-value": g.difference }, signed(g.difference)),
      h("td", { class: "n muted" }, interval(g.ci, signed)), h("td", { class: "n muted", "data-testid": "mdd" }, num(g.mdd80)),
      h("td", { class: g.regressed ? "n worse" : "n" }, int(g.regressed)), h("td", { class: g.fixed ? "n better" : "n" }, int(g.fixed)),
      h("td", { class: "n" }, int(g.unchanged)), h("td", { class: "n" }, int(g.excluded))))));
}

const SHOWN_CHANGES = 500;

function changes(comparison, openCase) {
  const list = comparison.changedCases;
  if (!list.length) return h("p", { class: "muted" }, "no case changed between the runs");
  return h("div", {},
    h("ol", { class: "changes", "data-testid": "changes" }, list.slice(0, SHOWN_CHANGES).map((c) =>
      h("li", { class: `change ${c.change}`, "data-testid": "change", "data-case": c.caseId, "data-change": c.change,
        onclick: () => openCase(c.caseId, list.slice(0, SHOWN_CHANGES).map((x) => x.caseId)) },
        h("span", { class: `chip ${c.change === "regressed" ? "fail" : "pass"}` }, c.change),
        h("code", {}, c.caseId), h("span", { class: "muted" }, ` ${c.evalId}`),
        h("span", { class: "n" }, ` pass ${pct(c.a.passRate)} → ${pct(c.b.passRate)}`)))),
    list.length > SHOWN_CHANGES ? h("p", { class: "muted" }, `… and ${int(list.length - SHOWN_CHANGES)} more (trunchbull compare --json lists them all)`) : null);
}

function caseList(title, ids) {
  if (!ids.length) return null;
  return h("details", {}, h("summary", {}, `${title} (${int(ids.length)})`), h("p", { class: "ids" }, ids.join(", ")));
}

export function renderCompare(section, report, openCase) {
  const { comparison } = report;
  const [kind, text] = verdict(comparison.overall);
  append(section, [
    h("p", { class: `verdict ${kind}`, "data-testid": "verdict" }, text),
    h("p", { class: "muted" }, "A is the baseline, B the run judged. Cases are paired by ID; a case's score is its mean ",
      "over its non-error repeats. B − A is the mean of the per-case differences, with a 95% interval by Newcombe's ",
      "square-and-add over each run's clustered Wilson interval (it stays inside [−1, 1]); MDD80 is the smallest true ",
      "difference these cases would detect 4 times in 5. A case regressed when its pass rate is lower in B, and was ",
      "fixed when it is higher."),
    power(comparison.overall),
    comparison.releaseChanged ? h("p", { class: "warning" }, "The runs are of different releases: cases are paired by ID.") : null,
    h("figure", {}, h("figcaption", {}, "B − A per eval, 95% confidence interval"), differencePlot(comparison)),
    differences(comparison),
    comparison.groups ? [
      h("h2", {}, `B − A by ${comparison.by} (${int(Object.keys(comparison.groups).length)} groups)`),
      h("p", { class: "muted", "data-testid": "macro" }, `Macro average (each group alike): A ${num(comparison.macro.meanA)}, `,
        `B ${num(comparison.macro.meanB)}, B − A ${signed(comparison.macro.difference)}. Each group's interval is its own, `,
        "not corrected for their number; the verdict above is the overall one."),
      differences(comparison, true),
    ] : null,
    h("h2", {}, "Changed cases: regressions first, then fixes"),
    changes(comparison, openCase),
    caseList("left out (no non-error sample in one of the runs)", comparison.excludedCases),
    caseList("added (only in B)", comparison.addedCases),
    caseList("removed (only in A)", comparison.removedCases),
  ]);
}
