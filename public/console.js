// The web console (/console): a client of the public /v1 API with the key the user pasted, kept in
// this tab's sessionStorage. Hash routes: #/sessions, #/messages[/<id>], #/apps, #/webhooks[/<id>],
// #/campaigns[/<id>], #/api-keys, #/opt-outs, #/events[/<id>], #/usage.
// Each page module's `render(view, context)` draws into `view` and may return a cleanup function
// (closing a live socket, stopping a poll) that runs when the page changes.

import { api, forgetKey, problemBox, storedKey, storeKey, whenUnauthenticated } from "./console/api.js";
import * as apiKeys from "./console/api-keys.js";
import * as apps from "./console/apps.js";
import * as campaigns from "./console/campaigns.js";
import { fill } from "./console/dom.js";
import * as events from "./console/events.js";
import * as messages from "./console/messages.js";
import * as optOuts from "./console/opt-outs.js";
import * as sessions from "./console/sessions.js";
import * as usage from "./console/usage.js";
import * as webhooks from "./console/webhooks.js";

const $ = (id) => document.getElementById(id);
const signIn = $("sign-in");
const signInForm = $("sign-in-form");
const signInError = $("sign-in-error");
const view = $("view");
const nav = $("nav");
const account = $("account");
const signOutButton = $("sign-out");

let cleanup = null;

/** The balance in the header, from `GET /v1/account`. */
async function refreshAccount() {
  try {
    const { data } = await api("GET", "/v1/account");
    fill(
      account,
      `Balance ${data.balance.toFixed(2)}`,
      " · ",
      `${data.remaining_messages.text} messages left`,
    );
    account.hidden = false;
  } catch {
    // A failed refresh keeps the last figures; a refused key signs out (whenUnauthenticated).
  }
}

const context = { refreshAccount };

function showSignIn(problem) {
  if (cleanup) cleanup();
  cleanup = null;
  view.hidden = true;
  view.replaceChildren();
  nav.hidden = true;
  account.hidden = true;
  signOutButton.hidden = true;
  signIn.hidden = false;
  signInError.hidden = !problem;
  if (problem) signInError.textContent = [problem.title, problem.detail].filter(Boolean).join(": ");
  $("api-key").focus();
}

function showConsole() {
  signIn.hidden = true;
  view.hidden = false;
  nav.hidden = false;
  signOutButton.hidden = false;
  refreshAccount();
  route();
}

function route() {
  if (!storedKey()) return;
  if (cleanup) cleanup();
  cleanup = null;
  const hash = location.hash || "#/sessions";
  const [path, query = ""] = hash.slice(1).split("?");
  const parts = path.split("/").filter(Boolean);
  const params = new URLSearchParams(query);
  for (const link of nav.querySelectorAll("a")) {
    if (link.getAttribute("href") === `#/${parts[0] ?? "sessions"}`)
      link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  view.replaceChildren();
  try {
    const page = {
      sessions,
      messages,
      apps,
      webhooks,
      campaigns,
      "api-keys": apiKeys,
      "opt-outs": optOuts,
      events,
      usage,
    }[parts[0] ?? "sessions"];
    if (!page) {
      location.hash = "#/sessions";
      return;
    }
    const result = page.render(view, {
      ...context,
      id: parts[1] ? decodeURIComponent(parts[1]) : null,
      params,
    });
    cleanup = typeof result === "function" ? result : null;
  } catch (error) {
    view.replaceChildren(problemBox(error));
  }
}

signInForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const key = $("api-key").value.trim();
  const button = signInForm.querySelector("button");
  button.disabled = true;
  try {
    await api("GET", "/v1/account", { key });
    storeKey(key);
    signInForm.reset();
    signInError.hidden = true;
    showConsole();
  } catch (error) {
    showSignIn(error.problem ?? { title: "Error", detail: String(error.message) });
  } finally {
    button.disabled = false;
  }
});

signOutButton.addEventListener("click", () => {
  forgetKey();
  showSignIn(null);
});

whenUnauthenticated((problem) => {
  forgetKey();
  showSignIn(problem);
});

window.addEventListener("hashchange", route);

if (storedKey()) showConsole();
else showSignIn(null);
