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
  it("lists every page up to 13 pages", () => {
    expect(pageLabels(13, 1)).toEqual(range(1, 13));
    expect(pageLabels(13, 13)).toEqual(range(1, 13));
    expect(pageLabels(0, 1)).toEqual(["1"]);
  });

  it("slides a window like Laravel's UrlWindow beyond 13 pages", () => {
    expect(pageLabels(14, 1)).toEqual([...range(1, 10), "...", "13", "14"]);
    expect(pageLabels(20, 7)).toEqual([...range(1, 10), "...", "19", "20"]);
    expect(pageLabels(20, 8)).toEqual(["1", "2", "...", ...range(5, 11), "...", "19", "20"]);
    expect(pageLabels(20, 13)).toEqual(["1", "2", "...", ...range(10, 16), "...", "19", "20"]);
    expect(pageLabels(20, 14)).toEqual(["1", "2", "...", ...range(11, 20)]);
    expect(pageLabels(20, 20)).toEqual(["1", "2", "...", ...range(11, 20)]);
  });

  it("renders gaps without a URL and marks only the current page active", () => {
    const { meta } = lengthAwarePage({ items: ["x"], total: 20, page: 10, perPage: 1, path });
    expect(meta.links.filter((l) => l.label === "...")).toEqual([
      { url: null, label: "...", active: false },
      { url: null, label: "...", active: false },
    ]);
    expect(meta.links.filter((l) => l.active)).toEqual([
      { url: `${path}?page=10`, label: "10", active: true },
    ]);
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
