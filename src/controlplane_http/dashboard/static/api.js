// The public API, as any client calls it: the credential (an API key or a JWT) from this tab's session storage,
// sent only to this origin as a bearer. Errors carry the envelope's code and message.

const KEY = "controlplane.credential";
let onUnauthorized = () => {};

export function credential() { return sessionStorage.getItem(KEY); }
export function remember(value) { sessionStorage.setItem(KEY, value); }
export function forget() { sessionStorage.removeItem(KEY); }
export function whenUnauthorized(callback) { onUnauthorized = callback; }

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message || `${status} ${code}`);
    this.status = status; this.code = code; this.details = details;
  }
}

function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params ?? {})) {
    if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

export async function request(method, path, { params, body, raw, headers, signal, blob } = {}) {
  const sent = { Authorization: `Bearer ${credential()}`, Accept: "application/json", ...headers };
  let payload = body;
  if (body !== undefined && !raw) { sent["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  const response = await fetch(`${path}${query(params)}`, { method, headers: sent, body: payload, signal });
  if (response.status === 401) {
    onUnauthorized();
    throw new ApiError(401, "UNAUTHORIZED", "The credential was refused (401): sign in again.");
  }
  if (!response.ok) {
    let code = String(response.status); let message = response.statusText; let details;
    try {
      const envelope = await response.json();
      code = envelope.error?.code ?? code; message = envelope.error?.message ?? message; details = envelope.error?.details;
    } catch (_) { /* not the envelope */ }
    throw new ApiError(response.status, code, message, details);
  }
  if (response.status === 204) return null;
  if (blob) return response.blob();
  const type = response.headers.get("content-type") ?? "";
  return type.includes("json") ? response.json() : response.blob();
}

export const get = (path, params, signal) => request("GET", path, { params, signal });
export const post = (path, body) => request("POST", path, { body: body ?? {} });
export const patch = (path, body) => request("PATCH", path, { body });
export const put = (path, body) => request("PUT", path, { body });
export const del = (path) => request("DELETE", path);
export const id = (value) => encodeURIComponent(value);

// Every page of a list (the console's look-up tables: agents, teams, queues), at most `cap` items.
export async function all(path, params = {}, cap = 1000) {
  const items = [];
  for (let offset = 0; offset < cap;) {
    const page = await get(path, { ...params, limit: 100, offset });
    items.push(...page.items);
    offset += page.items.length;
    if (!page.items.length || offset >= page.total) break;
  }
  return items;
}

// Server-sent events over fetch (EventSource cannot send a bearer), resumed with Last-Event-ID after a cut.
// `onEvent` returns true at the stream's end. Resolves when the stream ended or `signal` aborted.
export async function stream(path, onEvent, signal, onState = () => {}) {
  let last = null;
  while (!signal.aborted) {
    const headers = { Authorization: `Bearer ${credential()}`, Accept: "text/event-stream" };
    if (last) headers["Last-Event-ID"] = last;
    let ended = false;
    try {
      const response = await fetch(path, { headers, signal });
      if (response.status === 401) { onUnauthorized(); return; }
      if (!response.ok) { onState(`stream refused: ${response.status}`); return; }
      onState("live");
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
            const at = line.indexOf(":");
            const field = at < 0 ? line : line.slice(0, at);
            const text = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
            if (field === "id") event.id = text; else if (field === "event") event.type = text; else if (field === "data") event.data += text;
          }
          if (!event.data) continue;
          if (event.id) last = event.id;
          if (onEvent(event)) ended = true;
        }
      }
    } catch (_) { if (signal.aborted) return; }
    if (ended) return;
    onState("reconnecting");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// A list page, newest first: `order=desc` where the server knows it (a server before list ordering answers 422 on
// the unknown parameter: then it is asked without, once for all).
let ordering = true;
export async function newest(path, params = {}, signal) {
  if (ordering) {
    try { return await get(path, { ...params, order: "desc" }, signal); } catch (error) {
      if (error.status !== 422 || !JSON.stringify(error.details ?? error.message).includes("order")) throw error;
      ordering = false;
    }
  }
  return get(path, params, signal);
}
