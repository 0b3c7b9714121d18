import type { Child } from "hono/jsx";

/**
 * The HTML shell every web page shares (the hosted link page, the console): UTF-8, a phone-sized
 * viewport, no favicon, the shared stylesheet `/web.css` (public/), then the page's own stylesheets
 * and scripts, all served by this service, so a page renders with no other network than the
 * service's.
 */
export function Layout(props: {
  title: string;
  styles?: string[];
  /** Classic scripts, run in order once the page is parsed (`defer`). */
  scripts?: string[];
  /** ES module scripts (deferred by nature). */
  modules?: string[];
  children?: Child;
}) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title}</title>
        {/* No favicon: an empty one stops browsers asking for /favicon.ico. */}
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/web.css" />
        {(props.styles ?? []).map((href) => (
          <link rel="stylesheet" href={href} />
        ))}
        {(props.scripts ?? []).map((src) => (
          <script src={src} defer />
        ))}
        {(props.modules ?? []).map((src) => (
          <script type="module" src={src} />
        ))}
      </head>
      <body>{props.children}</body>
    </html>
  );
}
