import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { Layout } from "../layout";

/**
 * The hosted link page (`GET /link/{token}`): what an account sends its own customer so they can
 * link their phone without an API key. The server renders the session's state now; the script
 * `/link.js` (public/) then follows it live over `GET /v1/chatapp/sessions/{id}/live?token=…` and
 * calls `POST /link/{token}/pairing-code` and `POST /link/{token}/reconnect`. Every view is in
 * the page from the start, and the script only switches which one is shown, so a change never
 * needs a reload. Nothing of the account is rendered: only what `GET /link/{token}/session` shows.
 */

/** What the page renders: the fields of `GET /link/{token}/session` it uses (src/routes/link). */
export interface LinkPageView {
  session: {
    id: string;
    status: "pending" | "connected" | "disconnected" | "banned" | "failed";
    phone_number: string | null;
  };
  /** While `pending`: the QR code as a PNG data URI; else null. */
  qr_code: string | null;
  /** Where the page sends the user once linked (public https, checked when the link URL was made). */
  return_url: string | null;
}

/** The page's views, one `<section id="view-…">` each; the script shows one at a time. */
type View = "pending" | "connected" | "stopped" | "banned" | "gone";

function viewOf(status: LinkPageView["session"]["status"]): View {
  if (status === "pending" || status === "connected" || status === "banned") return status;
  return "stopped";
}

/** The document: `<!doctype html>` and the JSX tree as one escaped string. */
function documentOf(node: unknown): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`<!doctype html>${node}`;
}

/**
 * Renders the link page for `view`, showing the view its session's status calls for.
 * @returns the HTML document (for `c.html`).
 */
export function renderLinkPage(view: LinkPageView): HtmlEscapedString | Promise<HtmlEscapedString> {
  const shown = viewOf(view.session.status);
  const qr = view.session.status === "pending" ? view.qr_code : null;
  const returnUrl = view.return_url ?? undefined;
  return documentOf(
    <Layout title="Link your WhatsApp" styles={["/link.css"]} scripts={["/link.js"]}>
      <main class="link" data-session-id={view.session.id} data-return-url={returnUrl} data-view={shown}>
        <p id="live-status" class="live-status muted" role="status" aria-live="polite"></p>
        <noscript>
          <p class="error">This page needs JavaScript to show the live QR code.</p>
        </noscript>

        <section id="view-pending" aria-labelledby="pending-title" hidden={shown !== "pending"}>
          <h1 id="pending-title" tabindex={-1}>
            Link your WhatsApp
          </h1>
          <ol class="steps">
            <li>
              Open <strong>WhatsApp</strong> on your phone.
            </li>
            <li>
              Tap <strong>Settings</strong> (on Android, the <strong>⋮</strong> menu).
            </li>
            <li>
              Tap <strong>Linked devices</strong>, then <strong>Link a device</strong>.
            </li>
            <li>Point your phone at this screen to scan the QR code.</li>
          </ol>
          <figure class="qr">
            <img
              id="qr"
              src={qr ?? undefined}
              alt="QR code to scan with WhatsApp on your phone"
              width="264"
              height="264"
              hidden={!qr}
            />
            <figcaption id="qr-wait" hidden={Boolean(qr)}>
              Preparing the QR code…
            </figcaption>
            <figcaption id="qr-note" class="muted" hidden={!qr}>
              The code changes every few seconds; this page shows the current one.
            </figcaption>
          </figure>

          <section class="panel" aria-labelledby="phone-title">
            <h2 id="phone-title">Link with phone number instead</h2>
            <p class="muted">
              No camera? Get a code here, then on your phone choose Linked devices → Link a device → Link with
              phone number instead, and enter it.
            </p>
            <form id="pairing-form" method="post" novalidate>
              <label for="phone">Your phone number, with country code</label>
              <input
                id="phone"
                name="phone_number"
                type="tel"
                autocomplete="tel"
                inputmode="tel"
                placeholder="+14155552671"
                aria-describedby="pairing-error"
                required
              />
              <button type="submit">Get a pairing code</button>
            </form>
            <p id="pairing-error" class="error" role="alert" hidden></p>
            <div id="pairing-result" hidden>
              <p>Enter this code on your phone:</p>
              <p id="pairing-code" class="pairing-code"></p>
            </div>
          </section>
        </section>

        <section id="view-connected" aria-labelledby="connected-title" hidden={shown !== "connected"}>
          <h1 id="connected-title" class="success" tabindex={-1}>
            Your WhatsApp is linked
          </h1>
          <p>
            Linked number: <strong id="linked-number">{view.session.phone_number ?? ""}</strong>
          </p>
          <p id="return" hidden={!returnUrl}>
            Taking you back in a moment…{" "}
            <a id="return-link" href={returnUrl} rel="noreferrer">
              Continue
            </a>
          </p>
          <p id="done" hidden={Boolean(returnUrl)}>
            You can close this page.
          </p>
        </section>

        <section id="view-stopped" aria-labelledby="stopped-title" hidden={shown !== "stopped"}>
          <h1 id="stopped-title" tabindex={-1}>
            Your WhatsApp is not linked
          </h1>
          <p id="stopped-reason">Linking stopped before your phone was linked.</p>
          <button id="retry" type="button">
            Try again
          </button>
          <p id="retry-error" class="error" role="alert" hidden></p>
        </section>

        <section id="view-banned" aria-labelledby="banned-title" hidden={shown !== "banned"}>
          <h1 id="banned-title" tabindex={-1}>
            This WhatsApp account cannot be linked
          </h1>
          <p>WhatsApp has blocked this account. Contact whoever sent you this link.</p>
        </section>

        <section id="view-gone" aria-labelledby="gone-title" hidden>
          <h1 id="gone-title" tabindex={-1}>
            This link has expired
          </h1>
          <p>Ask whoever sent it to you for a new link.</p>
        </section>
      </main>
    </Layout>,
  );
}

/** What each error page says, by the status it answers with. */
const GONE_PAGES: Record<number, { title: string; text: string }> = {
  404: {
    title: "This link is not valid",
    text: "Check that you opened the whole link, or ask for a new one.",
  },
  410: { title: "This link has expired", text: "Ask whoever sent it to you for a new link." },
};

/**
 * The plain page shown instead of the link page when it cannot be: 404 "this link is not valid"
 * (unknown or malformed token, or its session deleted), 410 "this link has expired" (expired or
 * revoked), and for any other `status` a "try again later" page quoting `requestId`. Nothing of
 * the error itself is shown.
 */
export function renderLinkErrorPage(
  status: number,
  requestId: string | undefined,
): HtmlEscapedString | Promise<HtmlEscapedString> {
  const page = GONE_PAGES[status] ?? {
    title: "This page is not available right now",
    text: "Try again in a few minutes.",
  };
  return documentOf(
    <Layout title={page.title} styles={["/link.css"]}>
      <main class="link">
        <h1>{page.title}</h1>
        <p>{page.text}</p>
        {GONE_PAGES[status] || !requestId ? null : <p class="muted">Reference: {requestId}</p>}
      </main>
    </Layout>,
  );
}
