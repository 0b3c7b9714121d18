import { Layout } from "../layout";

/**
 * The console's HTML shell: the header (account balance, navigation, sign out), the sign-in form
 * and the element the client renders each page into. Everything after sign-in is drawn by
 * `/console.js` (public/), which talks to the `/v1` API with the key the user pasted.
 */
export function ConsolePage() {
  return (
    <Layout title="Console" styles={["/console.css"]} modules={["/console.js"]}>
      <header class="console-header">
        <div class="console-bar">
          <strong class="console-brand">Console</strong>
          <p id="account" class="console-account" aria-live="polite" hidden />
          <button id="sign-out" type="button" class="secondary" hidden>
            Sign out
          </button>
        </div>
        <nav id="nav" aria-label="Console" hidden>
          <a href="#/sessions">Sessions</a>
          <a href="#/messages">Messages</a>
          <a href="#/apps">Apps and codes</a>
          <a href="#/webhooks">Webhooks</a>
          <a href="#/campaigns">Campaigns</a>
          <a href="#/api-keys">API keys</a>
          <a href="#/opt-outs">Opt-outs</a>
          <a href="#/events">Events</a>
          <a href="#/usage">Usage</a>
        </nav>
      </header>
      <main id="main">
        <section id="sign-in" aria-labelledby="sign-in-title">
          <h1 id="sign-in-title">Sign in</h1>
          <p class="muted">
            Paste an API key. It stays in this browser tab (session storage) and is sent only to this
            service's API.
          </p>
          <form id="sign-in-form" class="panel">
            <label for="api-key">API key</label>
            <input
              id="api-key"
              name="api_key"
              type="password"
              autocomplete="off"
              required
              placeholder="sk_…"
            />
            <p id="sign-in-error" class="error" role="alert" hidden />
            <p>
              <button type="submit">Sign in</button>
            </p>
          </form>
          <noscript>
            <p class="error">The console needs JavaScript.</p>
          </noscript>
        </section>
        <div id="view" hidden />
      </main>
    </Layout>
  );
}
