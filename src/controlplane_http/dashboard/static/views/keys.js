// API keys (admins): issue one (shown once, with a copy button), list them, revoke one.
import * as api from "../api.js";
import { el, table, pager, when, badge, action, field, select, copy, notice, failed } from "../ui.js";

export async function render(main, _rest, signal) {
  const issued = el("section#issued", { "aria-live": "polite" });
  const list = el("section#key-list");
  let offset = 0;

  const name = el("input#key-name", { required: true, maxLength: 255, placeholder: "ci-pipeline" });
  const role = select([["viewer", "viewer"], ["member", "member"], ["admin", "admin"], ["worker", "worker (runs executions)"]], "member", { id: "key-role" });
  const expires = el("input#key-expires", { type: "date" });
  const form = el("form#issue-key.card", {},
    el("h2", {}, "Issue a key"),
    el("div.row", {}, field("Name", name), field("Role", role), field("Expires (optional)", expires, "at the end of that day, UTC")),
    el("button", { type: "submit" }, "Issue key"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { name: name.value.trim(), role: role.value };
    if (expires.value) body.expires_at = `${expires.value}T23:59:59Z`;
    try {
      const created = await api.post("/api/v1/api-keys", body);
      const secret = el("code#new-key", {}, created.key);
      const button = el("button#copy-key", { type: "button" }, "Copy");
      button.addEventListener("click", () => copy(created.key, button));
      issued.replaceChildren(el("div.card.once", {},
        el("h2", {}, `Key “${created.name}” (${created.role})`),
        el("p", {}, "This is the only time the key is shown: copy it now."),
        el("div.secret", {}, secret, button)));
      form.reset();
      offset = 0;
      await load();
    } catch (error) { failed(error); }
  });

  async function load() {
    const page = await api.newest("/api/v1/api-keys", { limit: 50, offset }, signal);
    list.replaceChildren(el("h2", {}, "Keys"), table([
      ["Name", (k) => k.name], ["Role", (k) => k.role], ["Prefix", (k) => el("code", {}, k.prefix)],
      ["Created", (k) => when(k.created_at)], ["Expires", (k) => when(k.expires_at) || "never"],
      ["State", (k) => badge(k.revoked_at ? "revoked" : k.expires_at && new Date(k.expires_at) < new Date() ? "expired" : "active")],
      ["", (k) => k.revoked_at ? null : action("Revoke", async () => {
        await api.del(`/api/v1/api-keys/${api.id(k.id)}`); notice(`Key “${k.name}” revoked.`); await load();
      }, { needs: "admin", danger: true, testid: "revoke" })],
    ], page.items, { empty: "No key yet." }), pager(page, (next) => { offset = next; load(); }));
  }

  main.replaceChildren(el("h1", {}, "API keys"), form, issued, list);
  await load();
}
