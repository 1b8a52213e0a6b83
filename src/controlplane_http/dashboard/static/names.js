// Names for ids: the organization's agents, teams, queues and workflows, fetched once and again when an id is
// not known (a new object), at most every 10 s.
import * as api from "./api.js";

const KINDS = {
  agent: "/api/v1/agents",
  team: "/api/v1/teams",
  queue: "/api/v1/worker-queues",
  workflow: "/api/v1/workflows",
  model: "/api/v1/models",
};
const tables = {};
const loaded = {};

async function load(kind) {
  const items = await api.all(KINDS[kind]);
  tables[kind] = new Map(items.map((item) => [item.id, item]));
  loaded[kind] = Date.now();
  return tables[kind];
}

export async function ensure(kinds, ids = {}) {
  await Promise.all(kinds.map(async (kind) => {
    const missing = (ids[kind] ?? []).some((value) => value && !tables[kind]?.has(value));
    if (!tables[kind] || (missing && Date.now() - loaded[kind] > 10000)) await load(kind);
  }));
}

export function name(kind, value) {
  if (!value) return "";
  return tables[kind]?.get(value)?.name ?? `${value.slice(0, 8)}…`;
}

export function items(kind) { return [...(tables[kind]?.values() ?? [])]; }

export function forget() { for (const kind of Object.keys(tables)) delete tables[kind]; }

// An execution's cost as the analytics routes count it (docs/analytics.md): prompt and completion tokens at the
// prices it was run with (the execution keeps them), else, for a server that does not say, its agent's model's
// prices today (found by id, else by value). null: no price or no tokens known.
export function cost(execution) {
  let model = null;
  if ("input_cost_per_million" in execution) {
    model = execution.model ? execution : null;
  } else {
    const agent = tables.agent?.get(execution.agent_id);
    const models = [...(tables.model?.values() ?? [])];
    model = agent?.model_id ? tables.model?.get(agent.model_id) ?? models.find((m) => m.value === agent.model_id) : null;
  }
  const usage = execution.usage ?? {};
  const tokens = (first, second) => (Number.isInteger(usage[first]) ? usage[first] : Number.isInteger(usage[second]) ? usage[second] : null);
  const prompt = tokens("prompt_tokens", "input_tokens"); const completion = tokens("completion_tokens", "output_tokens");
  if (!model || (prompt === null && completion === null)) return null;
  const part = (count, price) => (count === null || price === null || price === undefined ? 0 : (count * price) / 1e6);
  return part(prompt, model.input_cost_per_million) + part(completion, model.output_cost_per_million);
}
