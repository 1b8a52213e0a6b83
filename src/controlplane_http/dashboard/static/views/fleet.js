// Fleet: workers and runners, with their status, queues, versions and last heartbeat.
import * as api from "../api.js";
import * as names from "../names.js";
import { el, table, ago, when, badge } from "../ui.js";

export async function render(main, _rest, signal) {
  const workers = el("section#workers");
  const runners = el("section#runners");
  async function load() {
    const [workerPage, runnerPage] = await Promise.all([
      api.get("/api/v1/workers", { limit: 100 }, signal),
      api.get("/api/v1/runners", { limit: 100 }, signal),
    ]);
    await names.ensure(["queue"], { queue: [...workerPage.items.map((w) => w.queue_id), ...runnerPage.items.flatMap((r) => r.queue_ids)] });
    if (signal.aborted) return;
    const version = (w) => String(w.worker_metadata?.version ?? "");
    workers.replaceChildren(el("h2", {}, `Workers (${workerPage.total})`), table([
      ["Worker", (w) => w.worker_id], ["Status", (w) => badge(w.status)],
      ["Runner", (w) => w.worker_metadata?.runner ?? w.worker_metadata?.hostname ?? ""], ["Environment", (w) => w.environment_name],
      ["Queue", (w) => names.name("queue", w.queue_id)], ["Version", version], ["Tasks", (w) => w.tasks_processed],
      ["Current task", (w) => w.current_task_id ? el("a", { href: `#/executions/${w.current_task_id}` }, "open") : ""],
      ["Last heartbeat", (w) => el("span", { title: when(w.last_heartbeat_at) }, ago(w.last_heartbeat_at))],
    ], workerPage.items, { empty: "No worker has sent a heartbeat yet." }));
    runners.replaceChildren(el("h2", {}, `Runners (${runnerPage.total})`), table([
      ["Runner", (r) => r.name], ["Workers", (r) => r.worker_count],
      ["Status", (r) => Object.entries(r.status_counts ?? {}).filter(([, n]) => n).map(([s, n]) => `${n} ${s}`).join(", ")],
      ["Queues", (r) => r.queue_ids.map((q) => names.name("queue", q)).join(", ")],
      ["Environments", (r) => r.environment_names.join(", ")],
      ["Versions", (r) => Object.entries(r.versions ?? {}).map(([v, n]) => `${v} ×${n}`).join(", ")],
      ["Capacity", (r) => r.capacity], ["Last heartbeat", (r) => ago(r.last_heartbeat_at)],
    ], runnerPage.items, { empty: "No runner yet." }));
  }
  main.replaceChildren(el("h1", {}, "Fleet"), workers, runners);
  await load();
  const timer = setInterval(() => { load().catch(() => {}); }, 5000);
  signal.addEventListener("abort", () => clearInterval(timer));
}
