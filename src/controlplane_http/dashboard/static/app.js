// The operator dashboard: plain JavaScript over the public API, no build step. The API key stays in this tab's
// session storage and goes only to this origin, as a bearer. Data is rendered as text (never as HTML).
"use strict";

const KEY = "controlplane.apiKey";
const TERMINAL = new Set(["completed", "failed", "cancelled", "timed_out"]);
const $ = (id) => document.getElementById(id);
let tab = "executions";
let refresh = null;
let live = null; // the AbortController of the open execution stream

function key() { return sessionStorage.getItem(KEY); }

async function api(path) {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${key()}`, Accept: "application/json" } });
  if (response.status === 401) { signOut("The key was refused (401): sign in again."); throw new Error("401"); }
  if (!response.ok) {
    let message = `${response.status}`;
    try { const body = await response.json(); message = `${response.status} ${body.error?.code ?? ""}: ${body.error?.message ?? ""}`; } catch (_) { /* not JSON */ }
    const error = new Error(message); error.status = response.status; throw error;
  }
  return response.json();
}

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text == null ? "" : String(text);
  if (className) { td.className = className; td.dataset.status = String(text); }
  return td;
}

function when(iso) { return iso ? new Date(iso).toLocaleString() : ""; }

function render(columns, rows, onClick) {
  const head = $("table").tHead; const body = $("table").tBodies[0];
  head.replaceChildren(); body.replaceChildren();
  const tr = document.createElement("tr");
  for (const [title] of columns) { const th = document.createElement("th"); th.textContent = title; tr.append(th); }
  head.append(tr);
  for (const row of rows) {
    const line = document.createElement("tr");
    line.dataset.id = row.id ?? "";
    for (const [title, pick] of columns) line.append(cell(pick(row), title === "Status" ? "status" : undefined));
    if (onClick) { line.classList.add("clickable"); line.addEventListener("click", () => onClick(row)); }
    body.append(line);
  }
  $("status").textContent = rows.length ? `${rows.length} shown, refreshed ${new Date().toLocaleTimeString()}` : "Nothing here yet.";
}

const VIEWS = {
  async executions() {
    const page = await api("/api/v1/executions?limit=50");
    render([
      ["Status", (e) => e.status], ["Execution", (e) => e.id], ["Target", (e) => e.agent_id ?? e.team_id],
      ["Queue", (e) => e.worker_queue_id], ["Prompt", (e) => e.prompt.slice(0, 80)], ["Created", (e) => when(e.created_at)],
    ], page.items, openExecution);
  },
  async workers() {
    const page = await api("/api/v1/workers?limit=100");
    render([
      ["Status", (w) => w.status], ["Worker", (w) => w.worker_id], ["Environment", (w) => w.environment_name],
      ["Queue", (w) => w.queue_id], ["Tasks", (w) => w.tasks_processed], ["Last heartbeat", (w) => when(w.last_heartbeat_at)],
    ], page.items);
  },
  async queues() {
    const page = await api("/api/v1/worker-queues?limit=100");
    render([
      ["Status", (q) => q.status], ["Queue", (q) => q.name], ["Active workers", (q) => q.active_workers],
      ["Queued executions", (q) => q.queued_executions], ["Id", (q) => q.id],
    ], page.items);
  },
  async jobs() {
    const page = await api("/api/v1/jobs?limit=100");
    render([
      ["Job", (j) => j.name], ["Trigger", (j) => j.trigger?.type], ["Enabled", (j) => j.enabled],
      ["Next run", (j) => when(j.next_run_at)], ["Id", (j) => j.id],
    ], page.items);
  },
  async runs() {
    const page = await api("/api/v1/workflow-runs?limit=50");
    render([
      ["Status", (r) => r.status], ["Run", (r) => r.id], ["Workflow", (r) => r.workflow_id], ["Created", (r) => when(r.created_at)],
    ], page.items);
  },
  async webhooks() {
    let hooks;
    try { hooks = await api("/api/v1/webhooks?limit=20"); } catch (error) {
      if (error.status === 404 || error.status === 405) { render([["Delivery", () => ""]], []); $("status").textContent = "Webhooks are not available on this server."; return; }
      throw error;
    }
    const rows = [];
    for (const hook of hooks.items) {
      const page = await api(`/api/v1/webhooks/${encodeURIComponent(hook.id)}/deliveries?limit=20`);
      for (const d of page.items) rows.push({ ...d, url: hook.url });
    }
    render([
      ["Status", (d) => d.status], ["Event", (d) => d.event_type ?? d.event], ["Webhook", (d) => d.url],
      ["Attempts", (d) => d.attempts], ["Response", (d) => d.response_status ?? d.response_code], ["Created", (d) => when(d.created_at)],
    ], rows);
  },
};

async function show(name) {
  tab = name;
  for (const button of document.querySelectorAll("#tabs button")) button.classList.toggle("active", button.dataset.tab === name);
  if (name !== "executions") closeExecution();
  clearInterval(refresh);
  const load = async () => {
    try { await VIEWS[name](); } catch (error) { if (error.message !== "401") $("status").textContent = `Could not load: ${error.message}`; }
  };
  await load();
  refresh = setInterval(() => { if (tab === name && key()) load(); }, 3000);
}

// Server-sent events over fetch (EventSource cannot send a bearer), resumed with Last-Event-ID after a cut.
async function stream(path, onEvent, signal) {
  let last = null;
  while (!signal.aborted) {
    const headers = { Authorization: `Bearer ${key()}`, Accept: "text/event-stream" };
    if (last) headers["Last-Event-ID"] = last;
    let ended = false;
    try {
      const response = await fetch(path, { headers, signal });
      if (!response.ok) { $("detail-state").textContent = `stream: ${response.status}`; return; }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replace(/\r\n/g, "\n");
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
          const event = { id: null, type: "message", data: "" };
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) continue;
            const [field, ...rest] = line.split(":"); const text = rest.join(":").replace(/^ /, "");
            if (field === "id") event.id = text; else if (field === "event") event.type = text; else if (field === "data") event.data += text;
          }
          if (!event.data) continue;
          if (event.id) last = event.id;
          if (onEvent(event)) ended = true;
        }
      }
    } catch (error) { if (signal.aborted) return; }
    if (ended) return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function closeExecution() { if (live) live.abort(); live = null; $("detail").hidden = true; }

function openExecution(execution) {
  closeExecution();
  live = new AbortController();
  $("detail").hidden = false;
  $("detail-title").textContent = `Execution ${execution.id}`;
  $("detail-state").textContent = `status: ${execution.status} (live)`;
  $("events").replaceChildren();
  stream(`/api/v1/executions/${encodeURIComponent(execution.id)}/stream`, (event) => {
    const data = JSON.parse(event.data);
    const item = document.createElement("li");
    item.dataset.type = data.type;
    const detail = data.data?.text ?? data.data?.content ?? data.data?.status ?? data.data?.message ?? JSON.stringify(data.data);
    item.textContent = `#${data.seq} ${data.type}: ${detail}`;
    $("events").append(item);
    if (data.type === "status" && data.data?.status) $("detail-state").textContent = `status: ${data.data.status} (live)`;
    const over = data.type === "done" || (data.type === "status" && TERMINAL.has(data.data?.status));
    if (over) $("detail-state").textContent = `status: ${data.data?.status ?? "done"} (finished)`;
    return over;
  }, live.signal);
}

async function signIn(candidate) {
  sessionStorage.setItem(KEY, candidate);
  try { await api("/api/v1/executions?limit=1"); } catch (error) {
    sessionStorage.removeItem(KEY);
    $("signin-error").textContent = error.message === "401" ? "That key was refused." : `Could not sign in: ${error.message}`;
    return;
  }
  $("signin-error").textContent = "";
  $("signin-panel").hidden = true; $("app").hidden = false; $("signout").hidden = false;
  $("who").textContent = "signed in";
  await show("executions");
}

function signOut(message) {
  sessionStorage.removeItem(KEY); clearInterval(refresh); closeExecution();
  $("app").hidden = true; $("signout").hidden = true; $("signin-panel").hidden = false; $("who").textContent = "";
  $("signin-error").textContent = message ?? "";
}

document.addEventListener("DOMContentLoaded", () => {
  $("signin").addEventListener("submit", (event) => { event.preventDefault(); signIn($("key").value.trim()); });
  $("signout").addEventListener("click", () => signOut());
  for (const button of document.querySelectorAll("#tabs button")) button.addEventListener("click", () => show(button.dataset.tab));
  if (key()) signIn(key());
});
