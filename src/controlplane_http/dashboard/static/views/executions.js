// Executions: newest first, paged, filtered; an execution's detail with its live stream (token by token), its
// merged context, timings, usage, error, and cancel.
import * as api from "../api.js";
import * as names from "../names.js";
import { el, table, pager, when, seconds, badge, action, field, select, json, notice } from "../ui.js";

export const STATUSES = ["pending", "queued", "running", "waiting_for_input", "completed", "failed", "cancelled", "timed_out"];
const TERMINAL = new Set(["completed", "failed", "cancelled", "timed_out"]);
const filters = { status: "", agent_id: "", team_id: "", worker_queue_id: "", created_after: "", created_before: "" };
let offset = 0;

// The name it was run with (kept by the execution, whatever happened to its agent or team since), else today's.
export function target(execution) {
  const current = execution.agent_id ? names.name("agent", execution.agent_id) : names.name("team", execution.team_id);
  return `${execution.agent_id ? "" : "team "}${execution.target_name ?? current}`;
}

export async function render(main, rest, signal, _caller, query) {
  if (rest[0]) return detail(main, rest[0], signal);
  if (query?.size) { // a link with filters (#/executions?status=failed): those, and no others
    for (const key of Object.keys(filters)) filters[key] = query.get(key) ?? "";
    offset = 0;
  }
  await names.ensure(["agent", "team", "queue"]);
  const results = el("section#results", { "aria-live": "polite" });
  const choose = (kind, key, label) => {
    const options = [["", `any ${label}`], ...names.items(kind).map((item) => [item.id, item.name])];
    const input = select(options, filters[key], { id: `filter-${key}` });
    input.addEventListener("change", () => { filters[key] = input.value; offset = 0; load(); });
    return field(label[0].toUpperCase() + label.slice(1), input);
  };
  const status = select([["", "any status"], ...STATUSES.map((s) => [s, s])], filters.status, { id: "filter-status" });
  status.addEventListener("change", () => { filters.status = status.value; offset = 0; load(); });
  const range = (key, label) => {
    const input = el(`input#filter-${key}`, { type: "datetime-local", value: filters[key] });
    input.addEventListener("change", () => { filters[key] = input.value; offset = 0; load(); });
    return field(label, input);
  };
  const form = el("form.filters", { "aria-label": "filters", onsubmit: (event) => event.preventDefault() },
    field("Status", status), choose("agent", "agent_id", "agent"), choose("team", "team_id", "team"),
    choose("queue", "worker_queue_id", "queue"), range("created_after", "Created after"), range("created_before", "Created before"));

  async function load() {
    const params = { limit: 25, offset, status: filters.status, agent_id: filters.agent_id, team_id: filters.team_id, worker_queue_id: filters.worker_queue_id };
    if (filters.created_after) params.from = new Date(filters.created_after).toISOString();
    if (filters.created_before) params.to = new Date(filters.created_before).toISOString();
    let page;
    try { page = await api.newest("/api/v1/executions", params, signal); } catch (error) {
      if (signal.aborted) return;
      results.replaceChildren(el("p.error", { role: "alert" }, `${error.code}: ${error.message}`));
      return;
    }
    await names.ensure(["agent", "team", "queue"], { agent: page.items.map((e) => e.agent_id), team: page.items.map((e) => e.team_id), queue: page.items.map((e) => e.worker_queue_id) });
    if (signal.aborted) return;
    results.replaceChildren(table([
      ["Status", (e) => badge(e.status)],
      ["Target", (e) => el("a", { href: `#/executions/${e.id}` }, target(e))],
      ["Queue", (e) => names.name("queue", e.worker_queue_id)],
      ["Prompt", (e) => el("span.clip", { title: e.prompt }, e.prompt.slice(0, 100))],
      ["Created", (e) => when(e.created_at)],
      ["Duration", (e) => seconds(e.started_at, e.finished_at)],
      ["Error", (e) => e.error ? el("span.clip.err", { title: e.error }, e.error.slice(0, 80)) : ""],
    ], page.items, { open: (e) => { location.hash = `#/executions/${e.id}`; }, empty: "No execution matches." }),
    pager(page, (next) => { offset = next; load(); }));
  }

  main.replaceChildren(el("h1", {}, "Executions"), form, results);
  await load();
  const timer = setInterval(() => { if (offset === 0) load(); }, 3000);
  signal.addEventListener("abort", () => clearInterval(timer));
}

async function detail(main, executionId, signal) {
  const path = `/api/v1/executions/${api.id(executionId)}`;
  let execution = await api.get(path, {}, signal);
  await names.ensure(["agent", "team", "queue", "model"], { agent: [execution.agent_id], team: [execution.team_id], queue: [execution.worker_queue_id] });
  const state = el("p#detail-state", { role: "status" });
  const facts = el("dl#facts.facts");
  const output = el("pre#output.output", { "aria-live": "off" }, execution.response ?? "");
  const events = el("ol#events.events");
  const errorBox = el("section#error");
  const actions = el("div.actions");
  const context = el("section#context", {}, el("h2", {}, "Merged context"), el("p.loading", {}, "Loading…"));

  function draw() {
    state.textContent = `status: ${execution.status}${TERMINAL.has(execution.status) ? " (finished)" : " (live)"}`;
    state.dataset.status = execution.status;
    const usage = execution.usage ?? {};
    const rows = [
      ["Target", target(execution)], ["Queue", names.name("queue", execution.worker_queue_id)],
      ["Worker", execution.worker_id ?? ""], ["Attempt", `${execution.attempt} of ${execution.max_attempts}`],
      ["Created", when(execution.created_at)], ["Queued", when(execution.queued_at)],
      ["Started", when(execution.started_at)], ["Finished", when(execution.finished_at)],
      ["Queue wait", seconds(execution.queued_at, execution.started_at)], ["Run time", seconds(execution.started_at, execution.finished_at)],
      ...Object.entries(usage).map(([key, value]) => [key.replaceAll("_", " "), typeof value === "object" ? JSON.stringify(value) : String(value)]),
      ["Model", execution.model ?? ""],
      ["Cost", names.cost(execution) === null ? "" : names.cost(execution).toFixed(6)],
    ];
    facts.replaceChildren(...rows.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value || "—")]));
    errorBox.replaceChildren(...(execution.error ? [el("h2", {}, "Error"), el("pre.err", {}, execution.error)] : []));
    actions.replaceChildren(...(TERMINAL.has(execution.status) ? [] : [action("Cancel", async () => {
      execution = await api.post(`${path}/cancel`); notice(execution.cancel_requested ? "Cancel requested: the worker is told to stop." : "Cancelled."); draw();
    }, { danger: true, testid: "cancel" })].filter(Boolean)));
  }

  main.replaceChildren(
    el("p", {}, el("a", { href: "#/executions" }, "← Executions")),
    el("h1#detail-title", {}, `Execution ${execution.id}`),
    el("p.prompt", {}, execution.prompt),
    state, actions, errorBox,
    el("div.split", {},
      el("section", {}, el("h2", {}, "Response"), output, el("h2", {}, "Events"), events),
      el("section", {}, el("h2", {}, "Timings and usage"), facts)),
    context);
  draw();

  api.get(`${path}/context`, {}, signal).then((merged) => {
    context.replaceChildren(el("h2", {}, "Merged context"), json(merged));
  }, (error) => { context.replaceChildren(el("h2", {}, "Merged context"), el("p.error", {}, `${error.code}: ${error.message}`)); });

  let text = "";
  api.stream(`${path}/stream`, (event) => {
      const data = JSON.parse(event.data);
      const value = data.data ?? {};
      const shown = value.text ?? value.content ?? value.status ?? value.message ?? value.error ?? JSON.stringify(value);
      events.append(el("li", { dataset: { type: data.type } }, el("span.seq", {}, `#${data.seq}`), ` ${data.type}: ${shown}`));
      if (data.type === "message_chunk") { text += value.text ?? value.content ?? ""; output.textContent = text; }
      if (data.type === "message" && !text) { output.textContent = value.text ?? value.content ?? ""; }
      if (data.type === "status" && value.status) { execution = { ...execution, status: value.status }; draw(); }
      const over = data.type === "done" || (data.type === "status" && TERMINAL.has(value.status));
      if (over) {
        api.get(path, {}, signal).then((fresh) => {
          execution = fresh; if (fresh.response && !text) output.textContent = fresh.response; draw();
        }, () => {});
      }
      return over;
  }, signal);
}
