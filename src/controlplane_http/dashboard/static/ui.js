// Small DOM helpers. Every piece of data is written as text (textContent), never as HTML.

export const $ = (selector, root = document) => root.querySelector(selector);

// el("button.primary#save", { onclick, type: "button", dataset: {...} }, "Save", child...)
export function el(spec, props = {}, ...children) {
  const [, tag = "div", rest = ""] = spec.match(/^([a-z0-9]+)?(.*)$/i);
  const node = document.createElement(tag);
  for (const part of rest.match(/[.#][^.#]+/g) ?? []) {
    if (part[0] === ".") node.classList.add(part.slice(1)); else node.id = part.slice(1);
  }
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name in node && name !== "list" && name !== "form") node[name] = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return date.toLocaleString(undefined, { dateStyle: "short", timeStyle: "medium" });
}

export function ago(iso) {
  if (!iso) return "never";
  const seconds = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (seconds < 60) return `${Math.max(seconds, 0)} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

export function seconds(from, to) {
  if (!from || !to) return "";
  const value = (new Date(to) - new Date(from)) / 1000;
  return value < 60 ? `${value.toFixed(2)} s` : `${(value / 60).toFixed(1)} min`;
}

export const badge = (status) => el("span.badge", { dataset: { status: String(status ?? "") } }, status ?? "");

// A table: columns are [title, (row) => text or Node]; rows are clickable when `open` is given (Enter works too).
export function table(columns, rows, { open, empty = "Nothing here yet.", caption } = {}) {
  if (!rows.length) return el("p.empty", { role: "status" }, empty);
  const head = el("tr", {}, columns.map(([title]) => el("th", { scope: "col" }, title)));
  const body = rows.map((row) => {
    const line = el("tr", { dataset: { id: row.id ?? "" } },
      columns.map(([title, pick]) => el("td", { dataset: { label: title } }, pick(row) ?? "")));
    if (open) {
      line.classList.add("clickable");
      line.tabIndex = 0;
      line.addEventListener("click", (event) => { if (!event.target.closest("button, a")) open(row); });
      line.addEventListener("keydown", (event) => { if (event.key === "Enter" && event.target === line) open(row); });
    }
    return line;
  });
  return el("div.table-wrap", {}, el("table", {}, caption ? el("caption", {}, caption) : null, el("thead", {}, head), el("tbody", {}, body)));
}

// A list's `total` counts at most `offset` + MAX_COUNTED rows (docs/api-decisions.md, "Lists"): reaching it means
// "at least", shown with a "+".
export const MAX_COUNTED = 10000;
export function count(total, offset = 0) { return total >= offset + MAX_COUNTED ? `${total.toLocaleString()}+` : total.toLocaleString(); }

export function pager(page, onOffset) {
  const { total, limit, offset } = page;
  const last = Math.min(offset + page.items.length, total);
  return el("nav.pager", { "aria-label": "pages" },
    el("button", { type: "button", disabled: offset === 0, onclick: () => onOffset(Math.max(offset - limit, 0)) }, "← Newer"),
    el("span", { role: "status" }, total ? `${offset + 1}–${last} of ${count(total, offset)}` : "0 of 0"),
    el("button", { type: "button", disabled: last >= total, onclick: () => onOffset(offset + limit) }, "Older →"));
}

let noticeTimer = null;
export function notice(text, kind = "info") {
  const box = $("#notice");
  box.textContent = text; box.dataset.kind = kind; box.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { box.hidden = true; }, kind === "error" ? 8000 : 4000);
}

export function failed(error) { notice(`${error.code ?? "error"}: ${error.message}`, "error"); }

// A write button: hidden unless the signed-in role may write (`member`, or `admin` for admin-only actions).
export function action(label, run, { needs = "member", danger = false, testid } = {}) {
  if (!may(needs)) return null;
  const button = el(`button.action${danger ? ".danger" : ""}`, { type: "button", dataset: { action: testid ?? label } }, label);
  button.addEventListener("click", async () => {
    if (danger && !window.confirm(`${label}?`)) return;
    button.disabled = true;
    try { await run(); } catch (error) { failed(error); } finally { button.disabled = false; }
  });
  return button;
}

const RANK = { viewer: 0, member: 1, admin: 2 };
let role = "viewer";
export function setRole(value) { role = value; document.body.dataset.role = value; }
export function may(needs) { return (RANK[role] ?? -1) >= RANK[needs]; }

export function field(label, input, hint) {
  const name = input.id || `f-${Math.random().toString(36).slice(2)}`;
  input.id = name;
  return el("div.field", {}, el("label", { htmlFor: name }, label), input, hint ? el("small", {}, hint) : null);
}

export function select(options, value, props = {}) {
  return el("select", props, options.map(([optionValue, text]) =>
    el("option", { value: optionValue, defaultSelected: optionValue === value }, text)));
}

export async function copy(text, button) {
  try { await navigator.clipboard.writeText(text); button.textContent = "Copied"; } catch (_) {
    const range = document.createRange(); range.selectNodeContents(button.previousElementSibling);
    getSelection().removeAllRanges(); getSelection().addRange(range); button.textContent = "Selected: press Ctrl+C";
  }
}

export function json(value) { return el("pre.json", {}, JSON.stringify(value, null, 2)); }
