// Overview: what runs now, queue depth per queue, workers online and offline, executions / failure rate / cost
// over 24 hours or 7 days (the analytics routes, drawn by uPlot), and the most recent failures.
import * as api from "../api.js";
import * as names from "../names.js";
import { el, table, when, ago, badge, count } from "../ui.js";
import { target } from "./executions.js";

const FAILED = new Set(["failed", "timed_out"]);
const FINISHED = new Set(["completed", "failed", "cancelled", "timed_out"]);
let span = "24h";

function tile(label, value, id, href) {
  return el(`a.tile#${id}`, { href }, el("span.value", {}, String(value)), el("span.label", {}, label));
}

export async function render(main, _rest, signal) {
  const tiles = el("section.tiles", { "aria-label": "now" });
  const running = el("section#running");
  const queues = el("section#queues");
  const failures = el("section#failures");
  const charts = el("section#charts.charts");
  const spans = el("div.segmented", { role: "group", "aria-label": "time range" },
    ...["24h", "7d"].map((value) => el("button", {
      type: "button", "aria-pressed": String(value === span), dataset: { span: value },
      onclick: () => { span = value; for (const b of spans.children) b.setAttribute("aria-pressed", String(b.dataset.span === span)); drawCharts(); },
    }, value === "24h" ? "24 hours" : "7 days")));

  async function drawNow() {
    const [runningPage, queued, queueList, workers, failed] = await Promise.all([
      api.newest("/api/v1/executions", { status: "running", limit: 10 }, signal),
      api.get("/api/v1/executions", { status: "queued", limit: 1 }, signal),
      api.get("/api/v1/worker-queues", { limit: 100 }, signal),
      api.get("/api/v1/workers", { limit: 100 }, signal),
      Promise.all(["failed", "timed_out"].map((status) => api.newest("/api/v1/executions", { status, limit: 5 }, signal)))
        .then((pages) => ({ items: pages.flatMap((page) => page.items).sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1)).slice(0, 5) })),
    ]);
    const ids = [...runningPage.items, ...failed.items];
    await names.ensure(["agent", "team", "queue"], { agent: ids.map((e) => e.agent_id), team: ids.map((e) => e.team_id), queue: ids.map((e) => e.worker_queue_id) });
    if (signal.aborted) return;
    const online = workers.items.filter((w) => w.status !== "offline").length;
    tiles.replaceChildren(
      tile("running now", count(runningPage.total), "tile-running", "#/executions?status=running"),
      tile("queued", count(queued.total), "tile-queued", "#/executions?status=queued"),
      tile("workers online", online, "tile-online", "#/fleet"),
      tile("workers offline", workers.items.length - online, "tile-offline", "#/fleet"));
    const link = (e) => el("a", { href: `#/executions/${e.id}` }, target(e));
    running.replaceChildren(el("h2", {}, "Running now"), table([
      ["Target", link], ["Queue", (e) => names.name("queue", e.worker_queue_id)], ["Worker", (e) => e.worker_id ?? ""],
      ["Started", (e) => ago(e.started_at)],
    ], runningPage.items, { empty: "Nothing is running." }));
    queues.replaceChildren(el("h2", {}, "Queues"), table([
      ["Queue", (q) => el("a", { href: `#/executions?worker_queue_id=${encodeURIComponent(q.id)}` }, q.name)],
      ["Status", (q) => badge(q.status)], ["Queued", (q) => q.queued_executions],
      ["Workers", (q) => q.active_workers],
    ], queueList.items, { empty: "No queue yet." }));
    failures.replaceChildren(el("h2", {}, "Recent failures ", el("a", { href: "#/executions?status=failed" }, "(all)")), table([
      ["Target", link], ["Failed", (e) => when(e.finished_at ?? e.updated_at)],
      ["Error", (e) => el("span.err", {}, (e.error ?? "").slice(0, 160))],
    ], failed.items, { empty: "No failure." }));
  }

  let uPlot = null;
  async function drawCharts() {
    const to = new Date();
    const hours = span === "24h" ? 24 : 24 * 7;
    const from = new Date(to.getTime() - hours * 3600 * 1000);
    const params = { from: from.toISOString(), to: to.toISOString(), bucket: "hour" };
    const [byStatus, cost] = await Promise.all([
      api.get("/api/v1/analytics/timeseries", { ...params, metric: "executions", group_by: "status" }, signal),
      api.get("/api/v1/analytics/timeseries", { ...params, metric: "cost" }, signal),
    ]);
    uPlot ??= (await import("../vendor/uplot/uPlot.esm.js")).default;
    if (signal.aborted) return;
    const starts = (cost.series[0]?.points ?? []).map((p) => new Date(p.start).getTime() / 1000);
    const total = starts.map(() => 0); const failed = starts.map(() => 0); const finished = starts.map(() => 0);
    for (const series of byStatus.series) {
      series.points.forEach((point, index) => {
        const value = point.value ?? 0;
        total[index] += value;
        if (FAILED.has(series.group)) failed[index] += value;
        if (FINISHED.has(series.group)) finished[index] += value;
      });
    }
    const rate = finished.map((count, index) => (count ? (100 * failed[index]) / count : null));
    const costs = (cost.series[0]?.points ?? []).map((p) => p.value ?? 0);
    const style = getComputedStyle(document.body);
    const colour = (name) => style.getPropertyValue(name).trim() || "#3b82f6";
    const axis = { stroke: colour("--muted"), grid: { stroke: colour("--line") }, ticks: { stroke: colour("--line") } };
    const width = Math.max(Math.min(charts.clientWidth, 1200) / (charts.clientWidth > 900 ? 3 : 1) - 24, 260);
    const plot = (id, title, values, stroke, unit) => {
      const box = el(`figure.chart#${id}`, {}, el("figcaption", {}, title));
      new uPlot({
        width, height: 180, legend: { show: false }, cursor: { y: false },
        scales: { x: { time: true } },
        axes: [axis, { ...axis, values: (_u, ticks) => ticks.map((t) => `${t}${unit}`) }],
        series: [{}, { label: title, stroke, fill: `${stroke}33`, width: 2, points: { show: true, size: 4 } }],
      }, [starts, values], box);
      return box;
    };
    charts.replaceChildren(
      plot("chart-executions", "Executions", total, colour("--accent"), ""),
      plot("chart-failure-rate", "Failure rate", rate, colour("--bad"), "%"),
      plot("chart-cost", "Cost", costs, colour("--good"), ""));
    charts.dataset.span = span; charts.dataset.points = String(starts.length);
    charts.dataset.executions = String(total.reduce((sum, value) => sum + value, 0));
  }

  main.replaceChildren(el("h1", {}, "Overview"), tiles,
    el("div.chart-head", {}, el("h2", {}, "Activity"), spans), charts,
    el("div.split", {}, running, queues), failures);
  await Promise.all([drawNow(), drawCharts()]);
  const timer = setInterval(() => { drawNow().catch(() => {}); }, 5000);
  signal.addEventListener("abort", () => clearInterval(timer));
}
