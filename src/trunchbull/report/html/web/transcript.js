// A sample's transcript: system prompt, prompt, each tool call with its input
// and result (errors marked), the final output, finish reason, usage, each
// judge's grade and reasoning (model-graded kinds), and the evaluator's verdict
// with its details.
import { h, int, ms, num } from "./dom.js";

const json = (value) => JSON.stringify(value, null, 2);

function block(title, testid, content, cls) {
  return h("section", { class: `block ${cls || ""}`, "data-testid": testid }, h("h4", {}, title), content);
}

function pre(text, cls) {
  return h("pre", { class: cls || null }, text);
}

function toolCalls(run, i) {
  const { calls, results } = run.tools(i);
  if (!calls.length) return block("Tool calls", "tool-calls", h("p", { class: "muted" }, "no tool calls"));
  const byId = new Map(results.map((r) => [r.toolCallId, r]));
  return block(`Tool calls (${calls.length}, over ${run.steps(i) ?? "?"} model steps)`, "tool-calls",
    h("ol", { class: "calls" }, calls.map((call) => {
      const result = byId.get(call.toolCallId);
      const failed = result && "error" in result;
      return h("li", { class: failed ? "call failed" : "call", "data-testid": "tool-call", "data-tool": call.toolName },
        h("div", { class: "call-head" }, h("code", {}, call.toolName), h("span", { class: "muted" }, ` ${call.toolCallId || ""}`)),
        h("div", { class: "label" }, "input"), pre(json(call.input ?? call.args ?? null)),
        result === undefined
          ? h("p", { class: "muted", "data-testid": "tool-result" }, run.recorded(i) ? "no result recorded (recorded responses carry none)" : "no result")
          : failed
            ? h("div", { "data-testid": "tool-error" }, h("div", { class: "label error" }, "error"), pre(String(result.error), "error"))
            : h("div", { "data-testid": "tool-result" }, h("div", { class: "label" }, "result"), pre(json(result.output))));
    })));
}

// Each judge's verdict and reasoning (details.judges: one judge, or a panel's).
function judges(details) {
  const list = details && Array.isArray(details.judges) ? details.judges : [];
  if (!list.length) return null;
  return block(list.length > 1 ? `Judges (${list.length})` : "Judge", "judges",
    h("ol", { class: "calls" }, list.map((judge) => {
      const reasoning = judge.explanation ?? (list.length === 1 ? details.explanation : null);
      return h("li", { class: "call", "data-testid": "judge-verdict", "data-judge": judge.model, "data-grade": judge.grade ?? "" },
        h("div", { class: "call-head" }, h("code", {}, judge.model), ` grade ${judge.grade ?? "–"}`,
          judge.replayed ? h("span", { class: "muted" }, " (replayed)") : judge.cached ? h("span", { class: "muted" }, " (from the cache)") : null),
        reasoning != null ? pre(String(reasoning)) : h("p", { class: "muted" }, "no reply"));
    })));
}

/** The transcript of sample `i` of `run`, as an element. */
export function transcript(run, i) {
  const outcome = run.outcome(i);
  const tokens = run.tokens(i);
  const error = run.error(i);
  const details = run.details(i);
  const prompt = run.prompt(i);
  const system = run.system(i);
  const unavailable = run.note ? h("p", { class: "muted" }, "not available: ", run.note) : null;
  return h("article", { class: "transcript", "data-testid": "transcript", "data-run": run.index, "data-case": run.caseId(i) },
    h("header", {},
      h("h3", {}, run.caseId(i)),
      h("span", { class: `chip ${outcome}`, "data-testid": "outcome" }, outcome),
      h("span", { class: "muted" }, ` ${run.label} · ${run.evalId(i)} · repeat ${run.repeat(i)} · score ${num(run.score(i), 3)}`)),
    error ? block("Error", "error", pre(`${error.kind}: ${error.message}`, "error"), "error") : null,
    block("System prompt", "system", system !== null ? pre(system) : (unavailable || h("p", { class: "muted" }, "none"))),
    block("Prompt", "prompt", prompt !== null ? pre(prompt) : unavailable),
    toolCalls(run, i),
    block("Output", "output", run.recorded(i) ? pre(run.output(i) ?? "") : h("p", { class: "muted" }, "no response recorded")),
    block("Call", "call", h("dl", {},
      h("dt", {}, "finish reason"), h("dd", { "data-testid": "finish" }, run.finishReason(i) ?? "–"),
      h("dt", {}, "usage"), h("dd", { "data-testid": "usage" }, `${int(tokens.input)} in · ${int(tokens.output)} out · ${int(tokens.total)} total`),
      h("dt", {}, "latency"), h("dd", {}, ms(run.latency(i))),
      h("dt", {}, "attempts"), h("dd", {}, run.attempts(i) ?? "–"),
      h("dt", {}, "cached"), h("dd", {}, run.cached(i) ? "yes" : "no"))),
    judges(details),
    block(`Evaluator${run.evaluator(i) ? `: ${run.evaluator(i)}` : ""}`, "evaluator",
      h("div", {}, h("p", { "data-testid": "evaluator-message" }, run.message(i) ?? "–"),
        details !== null ? pre(json(details)) : null)),
  );
}
