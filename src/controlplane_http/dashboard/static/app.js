// The console: a small client of the public API (ES modules, no build step). Routes are the URL's hash
// (#/executions/<id>); each view draws into <main> and stops its timers and streams when the route changes.
import * as api from "./api.js";
import * as names from "./names.js";
import { $, el, setRole, may } from "./ui.js";

const VIEWS = {
  overview: () => import("./views/overview.js"),
  executions: () => import("./views/executions.js"),
  workflows: () => import("./views/workflows.js"),
  jobs: () => import("./views/jobs.js"),
  fleet: () => import("./views/fleet.js"),
  governance: () => import("./views/governance.js"),
  keys: () => import("./views/keys.js"),
};

let current = null; // the AbortController of the view on screen
let caller = null;

async function route() {
  if (!caller) return;
  const [path, search = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const [name = "overview", ...rest] = path.split("/").map(decodeURIComponent);
  const query = new URLSearchParams(search);
  const view = VIEWS[name] ? name : "overview";
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.dataset.view === view) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  const key = location.hash;
  if (current && current.key === key && !current.signal.aborted) return; // already drawing this route
  if (current) current.abort();
  const mine = new AbortController();
  mine.key = key;
  current = mine;
  const main = $("#main");
  main.replaceChildren(el("p.loading", { role: "status" }, "Loading…"));
  main.dataset.view = view;
  try {
    const module = await VIEWS[view]();
    if (mine.signal.aborted) return;
    await module.render(main, rest, mine.signal, caller, query);
  } catch (error) {
    if (error.status === 401 || mine.signal.aborted) return;
    main.replaceChildren(el("p.error", { role: "alert" }, `Could not load: ${error.code ?? ""} ${error.message}`));
  }
}

async function signIn(candidate) {
  names.forget(); // another credential may be another organization: its names are asked again
  api.remember(candidate);
  try {
    caller = await api.get("/api/v1/whoami");
  } catch (error) {
    api.forget();
    $("#signin-error").textContent = error.status === 401 ? "That credential was refused." : `Could not sign in: ${error.message}`;
    showSignIn();
    return;
  }
  if (caller.role === "worker") {
    api.forget(); caller = null;
    $("#signin-error").textContent = "A worker key runs executions only: sign in with a viewer, member or admin key.";
    showSignIn();
    return;
  }
  setRole(caller.role);
  $("#signin-error").textContent = "";
  $("#key").value = "";
  $("#signin-panel").hidden = true; $("#main").hidden = false; $("#nav").hidden = false; $("#signout").hidden = false;
  for (const link of document.querySelectorAll("#nav a[data-needs]")) link.hidden = !may(link.dataset.needs);
  $("#who").textContent = `${caller.subject} · ${caller.role} · ${caller.organization_id}`;
  await route();
}

function showSignIn() {
  $("#signin-panel").hidden = false; $("#main").hidden = true; $("#nav").hidden = true; $("#signout").hidden = true;
  $("#who").textContent = "";
  $("#key").focus();
}

// Signing out reloads the page: no view, timer, stream or cached name of this credential outlives it. The reason,
// if any, is shown by the sign-in form after the reload; the route stays, for the next credential.
const NOTE = "controlplane.signedOut";
function signOut(message) {
  api.forget(); caller = null;
  if (current) current.abort();
  if (message) sessionStorage.setItem(NOTE, message);
  location.reload();
}

api.whenUnauthorized(() => { if (caller) signOut("The credential was refused (401): sign in again."); });

$("#signin").addEventListener("submit", (event) => { event.preventDefault(); signIn($("#key").value.trim()); });
$("#signout").addEventListener("click", () => signOut());
window.addEventListener("hashchange", route);
$("#signin-error").textContent = sessionStorage.getItem(NOTE) ?? "";
sessionStorage.removeItem(NOTE);
if (api.credential()) signIn(api.credential()); else showSignIn();
