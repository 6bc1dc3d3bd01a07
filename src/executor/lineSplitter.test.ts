import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createLineSplitter } from "./lineSplitter.js";

function split(chunks: Buffer[], max?: number): string[] {
  const lines: string[] = [];
  const s = createLineSplitter((l) => lines.push(l), max);
  for (const c of chunks) s.push(c);
  s.end();
  return lines;
}

const b = (s: string): Buffer => Buffer.from(s, "utf8");

describe("createLineSplitter", () => {
  it("splits on \\n, strips one trailing \\r, flushes a partial last line", () => {
    expect(split([b("a\nb\r\nc\r\r\n\npartial")])).toEqual(["a", "b", "c\r", "", "partial"]);
  });

  it("joins a line cut across chunks, including a multi-byte character", () => {
    const bytes = b("héllo wörld\n€uro\n");
    const chunks = [...bytes].map((x) => Buffer.from([x]));
    expect(split(chunks)).toEqual(["héllo wörld", "€uro"]);
  });

  it("emits nothing for empty input and no extra line after a final \\n", () => {
    expect(split([])).toEqual([]);
    expect(split([b("x\n")])).toEqual(["x"]);
  });

  it("splits long lines without breaking UTF-8 sequences", () => {
    // 3-byte euro signs with a 10-byte limit: pieces of 9 bytes (3 chars).
    const lines = split([b("€".repeat(7) + "\n")], 10);
    expect(lines).toEqual(["€€€", "€€€", "€"]);
    for (const l of lines) expect(Buffer.byteLength(l)).toBeLessThanOrEqual(10);
  });

  it("a line of exactly max bytes followed by CRLF stays one line", () => {
    expect(split([b("abcd"), b("\r"), b("\n")], 4)).toEqual(["abcd"]);
    expect(split([b("abcde\r\n")], 4)).toEqual(["abcd", "e"]);
  });

  it("decodes invalid UTF-8 as U+FFFD and NUL as U+FFFD", () => {
    expect(split([Buffer.from([0x61, 0xff, 0x62, 0x00, 0x63, 0x0a])])).toEqual(["a\uFFFDb\uFFFDc"]);
  });

  it("rejects a limit too small to hold one UTF-8 sequence", () => {
    expect(() => createLineSplitter(() => {}, 3)).toThrow(/maxLineBytes/);
  });

  it("gives the same lines whatever the chunking (property)", () => {
    const bytesArb = fc.uint8Array({ maxLength: 300 }).map((a) =>
      // Bias towards newlines, CRs and multi-byte lead bytes.
      Buffer.from(a.map((x) => [0x0a, 0x0d, 0xe2, 0x82, 0xac, x][x % 6]!)),
    );
    fc.assert(
      fc.property(bytesArb, fc.array(fc.nat(), { maxLength: 20 }), fc.integer({ min: 4, max: 40 }), (data, cuts, max) => {
        const points = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((x, y) => x - y);
        const chunks: Buffer[] = [];
        let prev = 0;
        for (const p of [...points, data.length]) {
          chunks.push(data.subarray(prev, p));
          prev = p;
        }
        const whole = split([data], max);
        expect(split(chunks, max)).toEqual(whole);
        for (const l of whole) expect(Buffer.byteLength(l.replaceAll("\uFFFD", "?"))).toBeLessThanOrEqual(max);
      }),
      { numRuns: 500 },
    );
  });

  it("loses no text: joining valid UTF-8 lines gives back the input (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "grapheme", maxLength: 30 }), { maxLength: 10 }), (parts) => {
        const lines = parts.map((p) => p.replaceAll(/[\n\r\0]/g, ""));
        const text = lines.join("\n") + "\n";
        const out = split([b(text)], 8);
        // Long lines come back in pieces; their concatenation is the original content.
        expect(out.join("")).toEqual(lines.join(""));
      }),
    );
  });
});
