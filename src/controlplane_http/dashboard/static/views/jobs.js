// Jobs: their trigger, next fire time and last run; trigger now, enable, disable; a job's runs.
import * as api from "../api.js";
import * as names from "../names.js";
import { el, table, pager, when, badge, action, notice } from "../ui.js";

function trigger(job) {
  const t = job.trigger ?? {};
  return t.type === "cron" ? `cron ${t.cron} (${t.timezone ?? "UTC"})` : t.type;
}

function target(job) {
  const t = job.target ?? {};
  if (t.agent_id) return `agent ${names.name("agent", t.agent_id)}`;
  if (t.team_id) return `team ${names.name("team", t.team_id)}`;
  if (t.workflow_id) return `workflow ${names.name("workflow", t.workflow_id)}`;
  return "";
}

function runLink(run) {
  if (run.execution_id) return el("a", { href: `#/executions/${run.execution_id}` }, "execution");
  if (run.workflow_run_id) return el("a", { href: `#/workflows/_/${run.workflow_run_id}` }, "workflow run");
  return run.skipped_reason ?? "";
}

export async function render(main, rest, signal) {
  if (rest[0]) return job(main, rest[0], signal);
  const results = el("section#job-list");
  let offset = 0;
  async function load() {
    const page = await api.newest("/api/v1/jobs", { limit: 25, offset }, signal);
    const [lasts] = await Promise.all([
      Promise.all(page.items.map((j) => api.newest(`/api/v1/jobs/${api.id(j.id)}/runs`, { limit: 1 }, signal).then((runs) => runs, () => null))),
      names.ensure(["agent", "team", "workflow"]),
    ]);
    if (signal.aborted) return;
    const last = new Map(page.items.map((j, index) => [j.id, lasts[index]]));
    results.replaceChildren(table([
      ["Job", (j) => el("a", { href: `#/jobs/${j.id}` }, j.name)], ["Trigger", trigger], ["Target", target],
      ["Enabled", (j) => badge(j.enabled ? "active" : "paused")],
      ["Next fire", (j) => (j.enabled ? when(j.next_run_at) : "") || "—"],
      ["Last run", (j) => { const runs = last.get(j.id); const run = runs?.items[0]; return run ? el("span", {}, badge(run.status), " ", when(run.fired_at), ` (${runs.total} in all)`) : "never"; }],
      ["", (j) => el("span.actions", {}, ...[
        action("Trigger", async () => { await api.post(`/api/v1/jobs/${api.id(j.id)}/trigger`, {}); notice(`Job “${j.name}” triggered.`); await load(); }, { testid: "trigger" }),
        action(j.enabled ? "Disable" : "Enable", async () => { await api.patch(`/api/v1/jobs/${api.id(j.id)}`, { enabled: !j.enabled }); await load(); }, { testid: j.enabled ? "disable" : "enable" }),
      ].filter(Boolean))],
    ], page.items, { empty: "No job yet." }), pager(page, (next) => { offset = next; load(); }));
  }
  main.replaceChildren(el("h1", {}, "Jobs"), results);
  await load();
  const timer = setInterval(() => { load().catch(() => {}); }, 10000);
  signal.addEventListener("abort", () => clearInterval(timer));
}

async function job(main, jobId, signal) {
  const path = `/api/v1/jobs/${api.id(jobId)}`;
  const runs = el("section#job-runs");
  let offset = 0;
  const found = await api.get(path, {}, signal);
  await names.ensure(["agent", "team", "workflow"]);
  async function load() {
    const page = await api.newest(`${path}/runs`, { limit: 25, offset }, signal);
    if (signal.aborted) return;
    runs.replaceChildren(el("h2", {}, "Runs"), table([
      ["Status", (r) => badge(r.status)], ["Trigger", (r) => r.trigger], ["Fired", (r) => when(r.fired_at)],
      ["Scheduled for", (r) => when(r.scheduled_for)], ["Result", runLink],
    ], page.items, { empty: "Never fired." }), pager(page, (next) => { offset = next; load(); }));
  }
  main.replaceChildren(...[
    el("p", {}, el("a", { href: "#/jobs" }, "← Jobs")), el("h1", {}, found.name),
    el("dl.facts", {}, el("dt", {}, "Trigger"), el("dd", {}, trigger(found)), el("dt", {}, "Target"), el("dd", {}, target(found)),
      el("dt", {}, "Next fire"), el("dd", {}, found.enabled ? when(found.next_run_at) || "—" : "disabled"),
      el("dt", {}, "Prompt"), el("dd", {}, found.prompt)),
    el("div.actions", {}, ...[action("Trigger", async () => { await api.post(`${path}/trigger`, {}); notice("Triggered."); await load(); }, { testid: "trigger" })].filter(Boolean)),
    runs].filter(Boolean));
  await load();
}
