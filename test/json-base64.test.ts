import { describe, expect, it } from "vitest";
import { Base64TextDecoder, findStringMember } from "../src/lib/json-base64";

// The pieces that read Evolution API's media answer as it streams (src/lib/json-base64.ts): where
// the `base64` member begins, and its text decoded piece by piece, cut anywhere.

/** Evolution's answer up to where its `base64` string begins (the Baileys channel's member order). */
const HEAD =
  '{"mediaType":"documentMessage","fileName":"a \\"b\\".pdf","caption":"base64",' +
  '"size":{"fileLength":"3","base64":"no"},"mimetype":"application/pdf", "base64" : "';

describe("findStringMember", () => {
  it("finds the top-level member's string, with the members before it, not a nested or value one", () => {
    const text = `${HEAD}QUJD","buffer":null}`;
    expect(findStringMember(text, "base64")).toEqual({
      before: {
        mediaType: "documentMessage",
        fileName: 'a "b".pdf',
        caption: "base64",
        size: { fileLength: "3", base64: "no" },
        mimetype: "application/pdf",
      },
      valueStart: HEAD.length,
    });
  });

  it("asks for more text while the value's opening quote has not come", () => {
    for (let cut = 0; cut < HEAD.length; cut++)
      expect(findStringMember(HEAD.slice(0, cut), "base64")).toBeNull();
  });

  it("says absent for an object without the member, or with another value", () => {
    expect(findStringMember('{"mimetype":"image/png","size":{"base64":"x"}}', "base64")).toBe("absent");
    expect(findStringMember('{"base64":null,"buffer":null}', "base64")).toBe("absent");
  });

  it("throws SyntaxError for text that is not a JSON object", () => {
    for (const text of ['["base64"]', '"base64"', "<html>", '{"a":tru,"base64":"', '{"base64" x "'])
      expect(() => findStringMember(text, "base64"), text).toThrow(SyntaxError);
  });
});

describe("Base64TextDecoder", () => {
  // Every byte value, 256 + 1 bytes: a last group with padding, and `/` in the text.
  const bytes = Uint8Array.from({ length: 257 }, (_, i) => (i * 7) % 256);
  const text = btoa(String.fromCharCode(...bytes)).replaceAll("/", "\\/");

  const decode = (pieces: string[]) => {
    const decoder = new Base64TextDecoder();
    const out = [...pieces.map((piece) => decoder.push(piece)), decoder.end()];
    return Uint8Array.from(out.flatMap((part) => [...part]));
  };

  it("decodes the text cut in two anywhere, a `\\/` escape included", () => {
    expect(text).toContain("\\/");
    for (let cut = 0; cut <= text.length; cut++)
      expect(decode([text.slice(0, cut), text.slice(cut)])).toEqual(bytes);
  });

  it("decodes the text one character at a time, each call giving only whole groups", () => {
    const decoder = new Base64TextDecoder();
    const sizes = [...text].map((char) => decoder.push(char).byteLength);
    // 85 groups of 3 bytes, then the padded one of 2; nothing between the groups' last characters.
    expect(sizes.filter((size) => size > 0)).toEqual([...Array(85).fill(3), 2]);
    expect(decode([...text])).toEqual(bytes);
  });

  it("takes a last group written without its padding", () => {
    expect(decode(["QUJDRA"])).toEqual(new TextEncoder().encode("ABCD"));
  });

  it("throws SyntaxError for text that is not base64", () => {
    for (const pieces of [["QUJD RA=="], ["QQ==", "QUJD"], ["QUJDR"], ["QUJD\\n"], ["QUJD\\"], ["QU\u00e9D"]])
      expect(() => decode(pieces), pieces.join("|")).toThrow(SyntaxError);
  });
});
