// Small DOM and formatting helpers shared by the report's views.

/** h("div", {class: "x", onclick: f}, child, …): an element; children are
 * nodes, strings (as text), arrays of them, or null (skipped). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "style" && typeof value === "object") Object.assign(el.style, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export const pct = (v) => (v === null || v === undefined ? "–" : `${(v * 100).toFixed(1)}%`);
export const num = (v, digits = 3) => (v === null || v === undefined ? "–" : v.toFixed(digits));
export const signed = (v, digits = 3) => (v === null || v === undefined ? "–" : `${v >= 0 ? "+" : ""}${v.toFixed(digits)}`);
export const int = (v) => (v === null || v === undefined ? "–" : v.toLocaleString("en-US"));
export const ms = (v) => (v === null || v === undefined ? "–" : `${Math.round(v).toLocaleString("en-US")} ms`);
export const interval = (ci, f = pct) => (ci ? `[${f(ci[0])}, ${f(ci[1])}]` : "–");
export const OUTCOMES = ["pass", "fail", "error"];
