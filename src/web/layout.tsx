import type { Child } from "hono/jsx";

/**
 * The HTML shell every web page shares (the hosted link page, the console): UTF-8, a phone-sized
 * viewport, the shared stylesheet `/web.css` (public/), then the page's own stylesheets and scripts,
 * all served by this service, so a page renders with no other network than the service's.
 */
export function Layout(props: { title: string; styles?: string[]; scripts?: string[]; children?: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title}</title>
        <link rel="stylesheet" href="/web.css" />
        {(props.styles ?? []).map((href) => (
          <link rel="stylesheet" href={href} />
        ))}
        {(props.scripts ?? []).map((src) => (
          <script src={src} defer />
        ))}
      </head>
      <body>{props.children}</body>
    </html>
  );
}
