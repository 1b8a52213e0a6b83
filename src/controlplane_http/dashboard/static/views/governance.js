// Governance: policies (edit with the compiler's errors inline, dry run, decision log), the audit log with its
// filters, secrets (names and metadata; a value is set, never shown), webhooks' deliveries (redeliver), storage.
import * as api from "../api.js";
import { el, table, pager, when, badge, action, field, select, json, notice, failed, may } from "../ui.js";

const SECTIONS = [["policies", "Policies"], ["decisions", "Decision log"], ["audit", "Audit log"], ["secrets", "Secrets"], ["webhooks", "Webhooks"], ["storage", "Storage"]];
const ACTIONS = ["execute", "workflow.run", "job.create", "job.fire", "secret.write"];
const EXAMPLE = `package controlplane\n\ndeny contains msg if {\n  input.action == "execute"\n  contains(input.request.prompt, "forbidden")\n  msg := "prompts may not say forbidden"\n}\n`;

export async function render(main, rest, signal) {
  const section = SECTIONS.some(([name]) => name === rest[0]) ? rest[0] : "policies";
  const tabs = el("nav.tabs", { "aria-label": "governance" }, SECTIONS.map(([name, label]) =>
    el("a", { href: `#/governance/${name}`, "aria-current": name === section ? "page" : false, dataset: { section: name } }, label)));
  const body = el("section#governance-body");
  main.replaceChildren(el("h1", {}, "Governance"), tabs, body);
  await SECTION_VIEWS[section](body, rest.slice(1), signal);
  body.dataset.drawn = section;
}

function range(state, load) {
  return ["from", "to"].map((key) => {
    const input = el(`input#filter-${key}`, { type: "datetime-local", value: state[key] ?? "" });
    input.addEventListener("change", () => { state[key] = input.value; state.offset = 0; load(); });
    return field(key === "from" ? "From" : "To", input);
  });
}
const iso = (local) => (local ? new Date(local).toISOString() : "");

const SECTION_VIEWS = {
  async policies(body, rest, signal) {
    const list = el("section#policy-list");
    const editor = el("section#policy-editor");
    let offset = 0;
    async function load() {
      const page = await api.newest("/api/v1/policies", { limit: 25, offset }, signal);
      list.replaceChildren(table([
        ["Policy", (p) => el("a", { href: `#/governance/policies/${p.id}` }, p.name)], ["Enabled", (p) => badge(p.enabled ? "active" : "paused")],
        ["Enforcement", (p) => p.enforcement], ["Actions", (p) => p.actions.join(", ")], ["Updated", (p) => when(p.updated_at)],
      ], page.items, { empty: "No policy yet." }), pager(page, (next) => { offset = next; load(); }));
    }
    async function edit(policy) {
      const admin = may("admin");
      const name = el("input#policy-name", { value: policy?.name ?? "", required: true, readOnly: !admin });
      const rego = el("textarea#policy-rego", { rows: 14, spellcheck: false, readOnly: !admin }, policy?.rego ?? EXAMPLE);
      const enforcement = select([["enforce", "enforce"], ["audit", "audit"]], policy?.enforcement ?? "enforce", { id: "policy-enforcement", disabled: !admin });
      const enabled = el("input#policy-enabled", { type: "checkbox", checked: policy?.enabled ?? true, disabled: !admin });
      const actions = el("fieldset.row", {}, el("legend", {}, "Actions"), ACTIONS.map((a) =>
        el("label", {}, el("input", { type: "checkbox", value: a, checked: (policy?.actions ?? ["execute"]).includes(a), disabled: !admin }), ` ${a}`)));
      const problems = el("ul#policy-problems.problems", { role: "alert" });
      const save = action(policy ? "Save policy" : "Create policy", async () => {
        problems.replaceChildren();
        const payload = {
          name: name.value.trim(), rego: rego.value, enforcement: enforcement.value, enabled: enabled.checked,
          actions: [...actions.querySelectorAll("input:checked")].map((box) => box.value),
        };
        try {
          const saved = policy ? await api.patch(`/api/v1/policies/${api.id(policy.id)}`, payload) : await api.post("/api/v1/policies", payload);
          notice(`Policy “${saved.name}” saved.`);
          if (!policy) location.hash = `#/governance/policies/${saved.id}`; else await load();
        } catch (error) {
          if (error.status !== 422) throw error;
          const where = error.details?.line ? `line ${error.details.line}${error.details.column ? `, column ${error.details.column}` : ""}: ` : "";
          problems.replaceChildren(el("li", { dataset: { line: error.details?.line ?? "" } }, `${where}${error.message}`));
          if (error.details?.line) {
            const lines = rego.value.split("\n");
            const start = lines.slice(0, error.details.line - 1).join("\n").length + (error.details.line > 1 ? 1 : 0);
            rego.focus(); rego.setSelectionRange(start, start + (lines[error.details.line - 1] ?? "").length);
          }
        }
      }, { needs: "admin", testid: "save-policy" });
      const dryAction = select(ACTIONS.map((a) => [a, a]), "execute", { id: "dry-action" });
      const dryInput = el("textarea#dry-input", { rows: 6, spellcheck: false }, JSON.stringify({ resource: { type: "agent", attributes: {} }, request: { prompt: "say something forbidden" } }, null, 2));
      const dryResult = el("div#dry-result", { "aria-live": "polite" });
      const dry = action("Dry run", async () => {
        let input;
        try { input = JSON.parse(dryInput.value); } catch (error) { dryResult.replaceChildren(el("p.error", {}, `Not JSON: ${error.message}`)); return; }
        const outcome = await api.post("/api/v1/policies/evaluate", { action: dryAction.value, resource: input.resource ?? { type: "agent" }, request: input.request ?? {} });
        dryResult.replaceChildren(el("p", {}, badge(outcome.allowed ? "allow" : "deny"), outcome.allowed ? " allowed" : " refused"), json(outcome.decisions));
      }, { testid: "dry-run" });
      editor.replaceChildren(...[
        el("h2", {}, policy ? `Policy “${policy.name}”` : "New policy"),
        el("div.row", {}, field("Name", name), field("Enforcement", enforcement), el("label", {}, enabled, " enabled")),
        actions, field("Rego", rego), problems, el("div.actions", {}, ...[save].filter(Boolean)),
        el("h2", {}, "Dry run (the organization's enabled policies)"),
        el("div.row", {}, field("Action", dryAction)), field("Input: resource and request", dryInput),
        el("div.actions", {}, ...[dry].filter(Boolean)), dryResult,
      ]);
    }
    body.replaceChildren(list, editor);
    await load();
    await edit(rest[0] ? await api.get(`/api/v1/policies/${api.id(rest[0])}`, {}, signal) : null);
  },

  async decisions(body, _rest, signal) {
    const state = { offset: 0, allowed: "", action: "" };
    const results = el("section#decision-list");
    async function load() {
      const page = await api.newest("/api/v1/policy-decisions", { limit: 25, offset: state.offset, allowed: state.allowed, action: state.action,
        policy_id: state.policy_id, from: iso(state.from), to: iso(state.to) }, signal);
      results.replaceChildren(table([
        ["When", (d) => when(d.created_at)], ["Decision", (d) => badge(d.allowed ? "allow" : "deny")], ["Action", (d) => d.action],
        ["Policy", (d) => d.policy_name], ["Enforcement", (d) => d.enforcement], ["Who", (d) => d.principal.subject ?? ""],
        ["Resource", (d) => `${d.resource.type} ${d.resource.id ?? ""}`], ["Messages", (d) => [...d.deny, d.error].filter(Boolean).join("; ")],
      ], page.items, { empty: "No decision yet." }), pager(page, (next) => { state.offset = next; load(); }));
    }
    const allowed = select([["", "any decision"], ["true", "allowed"], ["false", "refused"]], "", { id: "filter-allowed" });
    allowed.addEventListener("change", () => { state.allowed = allowed.value; state.offset = 0; load(); });
    const act = select([["", "any action"], ...ACTIONS.map((a) => [a, a])], "", { id: "filter-action" });
    act.addEventListener("change", () => { state.action = act.value; state.offset = 0; load(); });
    const policies = await api.all("/api/v1/policies");
    const policy = select([["", "any policy"], ...policies.map((p) => [p.id, p.name])], "", { id: "filter-policy" });
    policy.addEventListener("change", () => { state.policy_id = policy.value; state.offset = 0; load(); });
    body.replaceChildren(el("form.filters", {}, field("Decision", allowed), field("Action", act), field("Policy", policy), ...range(state, load)), results);
    await load();
  },

  async audit(body, _rest, signal) {
    if (!may("admin")) { body.replaceChildren(el("p.empty", {}, "The audit log is for admins.")); return; }
    const state = { offset: 0 };
    const results = el("section#audit-list");
    async function load() {
      const params = { limit: 25, offset: state.offset, action: state.action, actor: state.actor, resource_type: state.resource_type,
        resource_id: state.resource_id, request_id: state.request_id, outcome: state.outcome, from: iso(state.from), to: iso(state.to) };
      let page;
      try { page = await api.get("/api/v1/audit-events", params, signal); } catch (error) { results.replaceChildren(el("p.error", {}, `${error.code}: ${error.message}`)); return; }
      results.replaceChildren(table([
        ["When", (e) => when(e.occurred_at)], ["Action", (e) => e.action], ["Outcome", (e) => badge(e.outcome)],
        ["Resource", (e) => `${e.resource_type} ${e.resource_id}`], ["Actor", (e) => `${e.actor.subject} (${e.actor.role})`],
        ["Client", (e) => e.client.ip ?? ""], ["Details", (e) => el("span.clip", { title: JSON.stringify(e.details) }, JSON.stringify(e.details))],
      ], page.items, { empty: "No event matches." }), pager(page, (next) => { state.offset = next; load(); }));
    }
    const text = (key, label, placeholder) => {
      const input = el(`input#filter-${key}`, { placeholder });
      input.addEventListener("change", () => { state[key] = input.value.trim(); state.offset = 0; load(); });
      return field(label, input);
    };
    const outcome = select([["", "any outcome"], ["succeeded", "succeeded"], ["denied", "denied"]], "", { id: "filter-outcome" });
    outcome.addEventListener("change", () => { state.outcome = outcome.value; state.offset = 0; load(); });
    body.replaceChildren(el("form.filters", { onsubmit: (event) => event.preventDefault() },
      text("action", "Action", "agent.create"), text("actor", "Actor", "subject"), text("resource_type", "Resource type", "agent"),
      text("resource_id", "Resource id", "id"), text("request_id", "Request id", "X-Request-ID"),
      field("Outcome", outcome), ...range(state, load)), results);
    await load();
  },

  async secrets(body, _rest, signal) {
    const results = el("section#secret-list");
    let offset = 0;
    async function load() {
      const page = await api.newest("/api/v1/secrets", { limit: 25, offset }, signal);
      results.replaceChildren(table([
        ["Name", (s) => s.name], ["Description", (s) => s.description ?? ""], ["Version", (s) => s.version],
        ["Updated", (s) => when(s.updated_at)], ["Last read by a worker", (s) => when(s.last_accessed_at) || "never"],
        ["", (s) => action("Set value", async () => { setValue(s); }, { testid: "set-secret" })],
      ], page.items, { empty: "No secret yet." }), pager(page, (next) => { offset = next; load(); }));
    }
    const setter = el("section#set-secret", { "aria-live": "polite" });
    function setValue(secret) {
      const input = el("input#secret-new-value", { type: "password", required: true, autocomplete: "off" });
      const form = el("form.card", {}, el("h2", {}, `New value of ${secret.name}`),
        el("div.row", {}, field("Value (write-only: never shown)", input), el("button", { type: "submit" }, "Set"),
          el("button", { type: "button", onclick: () => setter.replaceChildren() }, "Cancel")));
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        try {
          const saved = await api.patch(`/api/v1/secrets/${api.id(secret.id)}`, { value: input.value });
          setter.replaceChildren(); notice(`Secret ${saved.name} set (version ${saved.version}).`); await load();
        } catch (error) { failed(error); }
      });
      setter.replaceChildren(form);
      input.focus();
    }
    const name = el("input#secret-name", { required: true, placeholder: "OPENAI_API_KEY" });
    const value = el("input#secret-value", { type: "password", required: true, autocomplete: "off" });
    const form = may("member") ? el("form#new-secret.card", {}, el("h2", {}, "New secret"),
      el("div.row", {}, field("Name", name), field("Value (write-only)", value), el("button", { type: "submit" }, "Create"))) : null;
    form?.addEventListener("submit", async (event) => {
      event.preventDefault();
      try { await api.post("/api/v1/secrets", { name: name.value.trim(), value: value.value }); form.reset(); notice("Secret created."); await load(); } catch (error) { failed(error); }
    });
    body.replaceChildren(...[form, setter, results].filter(Boolean));
    await load();
  },

  async webhooks(body, _rest, signal) {
    let hooks;
    try { hooks = await api.newest("/api/v1/webhooks", { limit: 50 }, signal); } catch (error) {
      if (error.status === 404 || error.status === 503) { body.replaceChildren(el("p.empty", {}, "Webhooks are not available on this server.")); return; }
      throw error;
    }
    const results = el("section#delivery-list");
    async function load() {
      const pages = await Promise.all(hooks.items.map((hook) => api.newest(`/api/v1/webhooks/${api.id(hook.id)}/deliveries`, { limit: 20 }, signal).then((page) => page.items.map((d) => ({ ...d, url: hook.url })))));
      const rows = pages.flat().sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
      results.replaceChildren(el("h2", {}, "Deliveries"), table([
        ["Status", (d) => badge(d.status)], ["Event", (d) => d.event_type], ["Webhook", (d) => d.url], ["Attempts", (d) => d.attempts],
        ["Response", (d) => d.response_code ?? ""], ["Error", (d) => d.last_error ?? ""], ["Created", (d) => when(d.created_at)],
        ["", (d) => d.status === "pending" ? null : action("Redeliver", async () => {
          await api.post(`/api/v1/webhooks/${api.id(d.webhook_id)}/deliveries/${api.id(d.id)}/redeliver`); notice("Queued again."); await load();
        }, { needs: "admin", testid: "redeliver" })],
      ], rows, { empty: "No delivery yet." }));
    }
    body.replaceChildren(el("h2", {}, "Webhooks"), table([
      ["URL", (h) => h.url], ["Events", (h) => h.events.join(", ")], ["Enabled", (h) => badge(h.enabled ? "active" : "paused")],
      ["Failing since", (h) => when(h.failing_since)], ["Disabled because", (h) => h.disabled_reason ?? ""],
    ], hooks.items, { empty: "No webhook yet." }), results);
    await load();
  },

  async storage(body, _rest, signal) {
    const state = { prefix: "", offset: 0 };
    const results = el("section#file-list");
    const usage = el("p#storage-usage");
    async function load() {
      const [page, used] = await Promise.all([
        api.get("/api/v1/storage/files", { prefix: state.prefix, limit: 50, offset: state.offset }, signal),
        api.get("/api/v1/storage/usage", {}, signal),
      ]);
      usage.textContent = `${used.files} files, ${(used.bytes_used / 1048576).toFixed(2)} MiB of ${(used.quota_bytes / 1048576).toFixed(0)} MiB`;
      results.replaceChildren(table([
        ["Path", (f) => f.path], ["Size", (f) => `${f.size} B`], ["Type", (f) => f.content_type], ["Updated", (f) => when(f.updated_at)],
        ["", (f) => el("button", { type: "button", dataset: { action: "download" }, onclick: () => download(f.path).catch(failed) }, "Download")],
      ], page.items, { empty: "No file here." }), pager(page, (next) => { state.offset = next; load(); }));
    }
    const prefix = el("input#filter-prefix", { placeholder: "reports/" });
    prefix.addEventListener("change", () => { state.prefix = prefix.value.trim(); state.offset = 0; load(); });
    const file = el("input#upload-file", { type: "file" });
    const target = el("input#upload-path", { placeholder: "reports/summary.txt" });
    const upload = may("member") ? el("form#upload.card", {}, el("h2", {}, "Upload"),
      el("div.row", {}, field("File", file), field("Path (default: its name, under the prefix)", target), el("button", { type: "submit" }, "Upload"))) : null;
    upload?.addEventListener("submit", async (event) => {
      event.preventDefault();
      const chosen = file.files[0];
      if (!chosen) return;
      const path = target.value.trim() || `${state.prefix}${chosen.name}`;
      try {
        await api.request("PUT", `/api/v1/storage/files/${path.split("/").map(encodeURIComponent).join("/")}`,
          { body: chosen, raw: true, headers: { "Content-Type": chosen.type || "application/octet-stream" } });
        notice(`Uploaded ${path}.`); upload.reset(); await load();
      } catch (error) { failed(error); }
    });
    body.replaceChildren(...[usage, upload, el("form.filters", { onsubmit: (event) => event.preventDefault() }, field("Prefix", prefix)), results].filter(Boolean));
    await load();
  },
};

async function download(path) {
  const blob = await api.request("GET", `/api/v1/storage/files/${path.split("/").map(encodeURIComponent).join("/")}`, { headers: { Accept: "*/*" }, blob: true });
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: path.split("/").pop() });
  document.body.append(link); link.click(); link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
