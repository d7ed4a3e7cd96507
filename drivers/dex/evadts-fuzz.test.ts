import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../src/core/random.js";
import { MAX_FILE_BYTES, MAX_WARNINGS, parseEvaDts } from "./evadts.js";

const FIXTURES = join(import.meta.dirname, "../../test/fixtures/dex");
const SEEDS = ["note-example.dex", "quirks-lf.dex"].map((f) => readFileSync(join(FIXTURES, f)));
const ALPHABET = Buffer.from("*\r\n0123456789ABCDEFGPSTXV^ -\x00\xff", "latin1");

/** One mutation of `base`: flips, inserts and deletes bytes, biased to the format's own characters. */
function mutate(base: Buffer, rnd: () => number): Buffer {
  const bytes = [...base];
  const edits = 1 + Math.floor(rnd() * 20);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(rnd() * (bytes.length + 1));
    const pick = rnd() < 0.7 ? (ALPHABET[Math.floor(rnd() * ALPHABET.length)] ?? 0) : Math.floor(rnd() * 256);
    const op = rnd();
    if (op < 0.4) bytes[at] = pick;
    else if (op < 0.7) bytes.splice(at, 0, pick);
    else bytes.splice(at, 1 + Math.floor(rnd() * 10));
  }
  return Buffer.from(bytes);
}

describe("EVA-DTS parser under fuzzing (seeded, bounded)", () => {
  it("never throws on 3,000 mutated files and keeps its warnings bounded", () => {
    const rnd = seededRandom(36);
    for (let i = 0; i < 3000; i++) {
      const base = SEEDS[i % SEEDS.length] ?? Buffer.alloc(0);
      const r = parseEvaDts(mutate(base, rnd));
      expect(r.warnings.length).toBeLessThanOrEqual(MAX_WARNINGS + 1);
      expect(["ok", "swapped", "bad", "absent"]).toContain(r.check.g85);
    }
  });

  it("reads a 10 MB file of random bytes and of repeated segments in bounded time and memory", () => {
    const rnd = seededRandom(3636);
    const noise = Buffer.alloc(10 * 1024 * 1024);
    for (let i = 0; i < noise.length; i++) noise[i] = ALPHABET[Math.floor(rnd() * ALPHABET.length)] ?? 0;
    const lines = Buffer.from(
      "PA1*1*100*X\r\nPA2*1*100\r\nEA1*EGS*20250101*0000\r\n".repeat(200_000),
      "latin1",
    );
    for (const big of [noise, lines]) {
      global.gc?.();
      const before = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      const r = parseEvaDts(big);
      const ms = performance.now() - t0;
      const grown = process.memoryUsage().heapUsed - before;
      expect(r.warnings[0]).toBe(`file is ${big.length} bytes; only the first ${MAX_FILE_BYTES} were read`);
      expect(ms).toBeLessThan(5000);
      // The file itself is 10 MB; what the parse keeps is bounded by MAX_FILE_BYTES (256 KiB) of segments.
      expect(grown).toBeLessThan(64 * 1024 * 1024);
      expect(r.segments.length).toBeLessThan(MAX_FILE_BYTES / 4);
    }
  });

  it("reads a file that is one 10 MB line without splitting it into memory-hungry pieces", () => {
    const r = parseEvaDts(Buffer.alloc(10 * 1024 * 1024, 0x2a));
    expect(r.segments).toEqual([]);
    expect(r.warnings).toContain(`line 1: ${MAX_FILE_BYTES} characters, longer than any segment; skipped`);
  });
});
