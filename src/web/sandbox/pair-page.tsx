import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { Layout } from "../layout";

/**
 * The sandbox phone's pairing page (`/sandbox/pair/{token}`, the sandbox's QR payload): what a
 * phone scanning the QR code shows, with the hosted link page's stylesheets (`/web.css`,
 * `/link.css`). It names the account the phone would be linked to (its `name`), never an id.
 */
export type PairPageView =
  | { view: "confirm"; accountName: string }
  | { view: "linked"; accountName: string; phoneNumber: string }
  | { view: "not_pending" }
  | { view: "expired" };

const TITLES: Record<PairPageView["view"], string> = {
  confirm: "Link a device",
  linked: "Linked",
  not_pending: "Already linked",
  expired: "QR code expired",
};

/** Renders the page for `page` (for `c.html`). */
export function renderPairPage(page: PairPageView): HtmlEscapedString | Promise<HtmlEscapedString> {
  const title = TITLES[page.view];
  return html`<!doctype html>${(
    <Layout title={title} styles={["/link.css"]}>
      <main class="link">
        <h1>{title}</h1>
        {page.view === "confirm" ? (
          <>
            <p>
              Link this sandbox phone to <strong>{page.accountName}</strong>?
            </p>
            <form method="post">
              <button type="submit">Link</button>
            </form>
          </>
        ) : null}
        {page.view === "linked" ? (
          <p>
            This sandbox phone, <strong>{page.phoneNumber}</strong>, is now linked to{" "}
            <strong>{page.accountName}</strong>.
          </p>
        ) : null}
        {page.view === "not_pending" ? <p>This session is not waiting for a scan.</p> : null}
        {page.view === "expired" ? (
          <p>This QR code is unknown or has expired. Scan the current one.</p>
        ) : null}
      </main>
    </Layout>
  )}`;
}
