// Workflows: the list; a workflow's DAG (Cytoscape), its steps coloured by the chosen run's step status and
// redrawn live from the run's SSE stream; its runs, started and cancelled.
import * as api from "../api.js";
import * as names from "../names.js";
import { el, table, pager, when, seconds, badge, action, field, select, notice } from "../ui.js";

const RUN_TERMINAL = new Set(["succeeded", "failed", "cancelled"]);
const STEP_COLOURS = { pending: "--muted", running: "--warn", succeeded: "--good", failed: "--bad", skipped: "--line", cancelled: "--line" };
let cytoscape = null;

export async function render(main, rest, signal) {
  if (rest[0] === "_" && rest[1]) { // a run named alone (from a job's runs): its workflow's page
    const run = await api.get(`/api/v1/workflow-runs/${api.id(rest[1])}`, {}, signal);
    location.replace(`#/workflows/${run.workflow_id}/${run.id}`);
    return;
  }
  if (rest[0]) return workflow(main, rest[0], rest[1], signal);
  const results = el("section#workflow-list");
  const runs = el("section#recent-runs");
  let offset = 0;
  async function load() {
    const [page, recent] = await Promise.all([
      api.newest("/api/v1/workflows", { limit: 25, offset }, signal),
      api.newest("/api/v1/workflow-runs", { limit: 10 }, signal),
    ]);
    await names.ensure(["workflow"], { workflow: recent.items.map((r) => r.workflow_id) });
    if (signal.aborted) return;
    results.replaceChildren(table([
      ["Workflow", (w) => el("a", { href: `#/workflows/${w.id}` }, w.name)], ["Steps", (w) => w.steps.length],
      ["Description", (w) => w.description ?? ""], ["Updated", (w) => when(w.updated_at)],
    ], page.items, { open: (w) => { location.hash = `#/workflows/${w.id}`; }, empty: "No workflow yet." }),
    pager(page, (next) => { offset = next; load(); }));
    runs.replaceChildren(el("h2", {}, "Recent runs"), table([
      ["Status", (r) => badge(r.status)],
      ["Workflow", (r) => el("a", { href: `#/workflows/${r.workflow_id}/${r.id}` }, names.name("workflow", r.workflow_id))],
      ["Started", (r) => when(r.started_at ?? r.created_at)], ["Duration", (r) => seconds(r.started_at, r.finished_at)],
      ["Error", (r) => r.error ?? ""],
    ], recent.items, { open: (r) => { location.hash = `#/workflows/${r.workflow_id}/${r.id}`; }, empty: "No run yet." }));
  }
  main.replaceChildren(el("h1", {}, "Workflows"), results, runs);
  await load();
  const timer = setInterval(() => { load().catch(() => {}); }, 5000);
  signal.addEventListener("abort", () => clearInterval(timer));
}

function colour(name) { return getComputedStyle(document.body).getPropertyValue(name).trim(); }

async function workflow(main, workflowId, runId, signal) {
  const [definition] = await Promise.all([
    api.get(`/api/v1/workflows/${api.id(workflowId)}`, {}, signal),
    names.ensure(["agent", "team", "queue"]),
  ]);
  cytoscape ??= (await import("../vendor/cytoscape/cytoscape.esm.min.mjs")).default;
  if (signal.aborted) return;
  const graph = el("div#dag.dag", { role: "img", "aria-label": `the steps of ${definition.name} and their dependencies` });
  const state = el("p#run-state", { role: "status" });
  const steps = el("section#steps");
  const runList = el("section#runs");
  const controls = el("div.actions");
  let run = null; let live = null; let offset = 0;

  let cy = null;

  function paint() {
    for (const step of run?.steps ?? []) cy.getElementById(step.id).data("status", step.status);
    graph.dataset.statuses = JSON.stringify(Object.fromEntries(cy.nodes().map((node) => [node.id(), node.data("status")])));
    state.textContent = run ? `run ${run.id.slice(0, 8)}: ${run.status}${RUN_TERMINAL.has(run.status) ? "" : " (live)"}` : "no run chosen";
    state.dataset.status = run?.status ?? "";
    steps.replaceChildren(el("h2", {}, "Steps"), table([
      ["Step", (s) => s.id], ["Status", (s) => badge(s.status)],
      ["Execution", (s) => s.execution_id ? el("a", { href: `#/executions/${s.execution_id}` }, "open") : ""],
      ["Attempt", (s) => `${s.attempt} of ${s.max_attempts}`], ["Duration", (s) => seconds(s.started_at, s.finished_at)],
      ["Error", (s) => s.error ?? ""],
    ], run?.steps ?? definition.steps.map((s) => ({ ...s, status: "pending", attempt: 0 }))));
    controls.replaceChildren(...[
      run && !RUN_TERMINAL.has(run.status) ? action("Cancel run", async () => {
        run = await api.post(`/api/v1/workflow-runs/${api.id(run.id)}/cancel`); notice("Run cancelled."); paint(); loadRuns();
      }, { danger: true, testid: "cancel-run" }) : null,
    ].filter(Boolean));
  }

  async function choose(id) {
    if (live) live.abort();
    run = id ? await api.get(`/api/v1/workflow-runs/${api.id(id)}`, {}, signal) : null;
    paint();
    if (!run || RUN_TERMINAL.has(run.status)) return;
    live = new AbortController();
    signal.addEventListener("abort", () => live?.abort());
    const chosen = run.id;
    api.stream(`/api/v1/workflow-runs/${api.id(chosen)}/stream`, (event) => {
      const data = JSON.parse(event.data);
      const value = data.data ?? {};
      if (run?.id !== chosen) return true;
      if (data.type === "step") run = { ...run, steps: run.steps.map((s) => (s.id === value.step_id ? { ...s, ...value, id: s.id } : s)) };
      if (data.type === "run") run = { ...run, status: value.status, error: value.error };
      paint();
      const over = data.type === "run" && RUN_TERMINAL.has(value.status);
      if (over) { api.get(`/api/v1/workflow-runs/${api.id(chosen)}`, {}, signal).then((fresh) => { if (run?.id === chosen) { run = fresh; paint(); } }, () => {}); loadRuns(); }
      return over;
    }, live.signal);
  }

  async function loadRuns() {
    const page = await api.newest("/api/v1/workflow-runs", { workflow_id: workflowId, limit: 10, offset }, signal);
    if (signal.aborted) return;
    runList.replaceChildren(el("h2", {}, "Runs"), table([
      ["Status", (r) => badge(r.status)], ["Run", (r) => el("a", { href: `#/workflows/${workflowId}/${r.id}` }, r.id.slice(0, 8))],
      ["Queue", (r) => names.name("queue", r.worker_queue_id)], ["Started", (r) => when(r.started_at ?? r.created_at)],
      ["Duration", (r) => seconds(r.started_at, r.finished_at)], ["Error", (r) => r.error ?? ""],
    ], page.items, { open: (r) => { location.hash = `#/workflows/${workflowId}/${r.id}`; }, empty: "No run yet." }),
    pager(page, (next) => { offset = next; loadRuns(); }));
    return page;
  }

  const queue = select(names.items("queue").map((q) => [q.id, q.name]), "", { id: "run-queue" });
  const start = action("Start run", async () => {
    const started = await api.post(`/api/v1/workflows/${api.id(workflowId)}/runs`, { worker_queue_id: queue.value });
    location.hash = `#/workflows/${workflowId}/${started.id}`;
  }, { testid: "start-run" });
  main.replaceChildren(...[
    el("p", {}, el("a", { href: "#/workflows" }, "← Workflows")),
    el("h1#workflow-title", {}, definition.name), definition.description ? el("p", {}, definition.description) : null,
    start ? el("div.row", {}, field("Queue", queue), start) : null,
    state, controls,
    el("div.legend", { "aria-label": "step colours" }, Object.keys(STEP_COLOURS).map((status) => badge(status))),
    graph, steps, runList].filter(Boolean));
  const text = colour("--text"); const line = colour("--line");
  cy = cytoscape({
    container: graph,
    elements: [
      ...definition.steps.map((step) => ({
        data: { id: step.id, label: `${step.id}\n${step.agent_id ? names.name("agent", step.agent_id) : `team ${names.name("team", step.team_id)}`}`, status: "pending" },
      })),
      ...definition.steps.flatMap((step) => step.depends_on.map((from) => ({ data: { id: `${from}->${step.id}`, source: from, target: step.id } }))),
    ],
    style: [
      { selector: "node", style: {
        shape: "round-rectangle", width: 150, height: 48, label: "data(label)", "text-wrap": "wrap",
        "text-valign": "center", "font-size": 14, color: text, "background-color": colour("--panel"),
        "border-width": 3, "border-color": colour("--muted"),
      } },
      ...Object.entries(STEP_COLOURS).map(([status, name]) => ({ selector: `node[status = "${status}"]`, style: { "border-color": colour(name) } })),
      { selector: "edge", style: { width: 2, "line-color": line, "target-arrow-color": line, "target-arrow-shape": "triangle", "curve-style": "bezier" } },
    ],
    layout: { name: "breadthfirst", directed: true, spacingFactor: 1.1, padding: 20 },
    userZoomingEnabled: false, boxSelectionEnabled: false, autoungrabify: true, maxZoom: 1.5,
  });
  graph.dataset.ready = "true";
  const page = await loadRuns();
  await choose(runId ?? page?.items[0]?.id ?? null);
  const timer = setInterval(() => { loadRuns().catch(() => {}); }, 5000);
  signal.addEventListener("abort", () => { clearInterval(timer); cy.destroy(); });
}
