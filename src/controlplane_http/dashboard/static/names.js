// Names for ids: the organization's agents, teams, queues and workflows, fetched once and again when an id is
// not known (a new object), at most every 10 s.
import * as api from "./api.js";

const KINDS = {
  agent: "/api/v1/agents",
  team: "/api/v1/teams",
  queue: "/api/v1/worker-queues",
  workflow: "/api/v1/workflows",
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
