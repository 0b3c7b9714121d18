import { describe, expect, it } from "vitest";
import { lengthAwarePage } from "../src/lib/paginator";

const path = "https://api.example/v1/apps";

/** The labels of `meta.links` between « Previous and Next ». */
function pageLabels(total: number, page: number, perPage = 1): string[] {
  const items = Array.from(
    { length: Math.max(Math.min(perPage, total - (page - 1) * perPage), 0) },
    (_, i) => i,
  );
  const { meta } = lengthAwarePage({ items, total, page, perPage, path });
  expect(meta.links[0]?.label).toBe("&laquo; Previous");
  expect(meta.links.at(-1)?.label).toBe("Next &raquo;");
  return meta.links.slice(1, -1).map((link) => link.label);
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => String(a + i));

describe("lengthAwarePage", () => {
  it("lists every page, one entry per page number", () => {
    expect(pageLabels(13, 1)).toEqual(range(1, 13));
    expect(pageLabels(13, 13)).toEqual(range(1, 13));
    expect(pageLabels(0, 1)).toEqual(["1"]);
  });

  it("lists every page beyond 13 pages too, with no `...` gaps", () => {
    expect(pageLabels(14, 1)).toEqual(range(1, 14));
    expect(pageLabels(20, 10)).toEqual(range(1, 20));
    expect(pageLabels(250, 125, 1)).toEqual(range(1, 250));
    expect(pageLabels(45, 3, 10)).toEqual(range(1, 5));
  });

  it("gives every page its URL and marks only the current page active", () => {
    const { meta } = lengthAwarePage({ items: ["x"], total: 20, page: 10, perPage: 1, path });
    expect(meta.links).toHaveLength(22);
    expect(meta.links.slice(1, -1)).toEqual(
      range(1, 20).map((n) => ({ url: `${path}?page=${n}`, label: n, active: n === "10" })),
    );
    expect(meta.links[0]).toEqual({ url: `${path}?page=9`, label: "&laquo; Previous", active: false });
    expect(meta.links[21]).toEqual({ url: `${path}?page=11`, label: "Next &raquo;", active: false });
  });

  it("puts appended parameters ahead of page, as Laravel's url() does", () => {
    const { links } = lengthAwarePage({
      items: ["a", "b"],
      total: 6,
      page: 2,
      perPage: 2,
      path,
      appends: { per_page: "2" },
    });
    expect(links).toEqual({
      first: `${path}?per_page=2&page=1`,
      last: `${path}?per_page=2&page=3`,
      prev: `${path}?per_page=2&page=1`,
      next: `${path}?per_page=2&page=3`,
    });
  });

  it("answers an empty first page with last_page 1 and null from/to", () => {
    expect(lengthAwarePage({ items: [], total: 0, page: 1, perPage: 10, path })).toEqual({
      data: [],
      links: { first: `${path}?page=1`, last: `${path}?page=1`, prev: null, next: null },
      meta: {
        current_page: 1,
        from: null,
        last_page: 1,
        links: [
          { url: null, label: "&laquo; Previous", active: false },
          { url: `${path}?page=1`, label: "1", active: true },
          { url: null, label: "Next &raquo;", active: false },
        ],
        path,
        per_page: 10,
        to: null,
        total: 0,
      },
    });
  });
});
