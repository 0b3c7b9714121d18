/**
 * Laravel's length-aware paginator as an API resource collection renders it: the `data`, `links`
 * and `meta` fields of the app listing (the `AppList` schema of openapi.json) are that shape,
 * exactly (Laravel docs, https://laravel.com/docs/eloquent-resources#pagination). The rules follow
 * `Illuminate\Pagination\LengthAwarePaginator::toArray()`, `AbstractPaginator::url()`,
 * and `Illuminate\Http\Resources\Json\PaginatedResourceResponse`; `meta.links` lists every page
 * (see {@link lengthAwarePage}).
 */

/** One entry of `meta.links`: a page number, or the previous/next link. */
export interface PageLink {
  url: string | null;
  label: string;
  active: boolean;
}

/** The body of a paginated listing: `{ data, links, meta }`. */
export interface LengthAwarePage<T> {
  data: T[];
  links: { first: string; last: string; prev: string | null; next: string | null };
  meta: {
    current_page: number;
    from: number | null;
    last_page: number;
    links: PageLink[];
    path: string;
    per_page: number;
    to: number | null;
    total: number;
  };
}

export interface PageInput<T> {
  /** The items of the requested page (at most `perPage`). */
  items: T[];
  /** Number of items on all pages. */
  total: number;
  /** Requested page, 1-based; may lie beyond the last page (then `items` is empty). */
  page: number;
  perPage: number;
  /** Absolute URL of the listing without query string, e.g. `https://api.example/v1/apps`. */
  path: string;
  /**
   * Query parameters carried into every page URL ahead of `page` (Laravel's `appends()`), e.g.
   * `{ per_page: "25" }` so that following a link keeps the page size.
   */
  appends?: Record<string, string>;
}

/**
 * Builds the paginated body. As in Laravel: `last_page` is at least 1; `from`/`to` are 1-based
 * item positions, null on an empty page; `prev` is null on page 1 and `next` null from the last
 * page on; `first`/`last` are always URLs; page URLs are `path?page=N` (after any `appends`).
 * `meta.links` is `« Previous`, then one entry per page number from 1 to `last_page`, then
 * `Next »` (one entry per page number: chosen here). This departs from Laravel's `UrlWindow`,
 * which elides long runs beyond 13 pages with `...` entries: this API lists every page, and
 * `per_page` (at most 100) keeps the list proportional to the data.
 */
export function lengthAwarePage<T>(input: PageInput<T>): LengthAwarePage<T> {
  const { items, total, page, perPage, path } = input;
  const lastPage = Math.max(Math.ceil(total / perPage), 1);
  const query = new URLSearchParams(input.appends);
  const url = (n: number) => {
    query.set("page", String(Math.max(n, 1)));
    return `${path}?${query.toString()}`;
  };
  const prev = page > 1 ? url(page - 1) : null;
  const next = page < lastPage ? url(page + 1) : null;
  const from = items.length > 0 ? (page - 1) * perPage + 1 : null;
  const to = from === null ? null : from + items.length - 1;

  const links: PageLink[] = [{ url: prev, label: "&laquo; Previous", active: false }];
  for (let n = 1; n <= lastPage; n++) {
    links.push({ url: url(n), label: String(n), active: n === page });
  }
  links.push({ url: next, label: "Next &raquo;", active: false });

  return {
    data: items,
    links: { first: url(1), last: url(lastPage), prev, next },
    meta: {
      current_page: page,
      from,
      last_page: lastPage,
      links,
      path,
      per_page: perPage,
      to,
      total,
    },
  };
}
