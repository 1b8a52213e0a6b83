import { el } from "../ui.js";
export async function render(main) { main.replaceChildren(el("h1", {}, "jobs")); }
