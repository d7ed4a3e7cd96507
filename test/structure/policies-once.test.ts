/**
 * Each policy is written once (issue 35, docs/developers.md "Policies written once"): no production file
 * but the policy's module spells the scrypt hash format or a day's shape, and no amount is formatted with
 * `toFixed(2)`. Test-only files are exempt.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(path));
    else if (/\.ts$/.test(e.name) && !/\.test(-support)?\.ts$/.test(e.name)) out.push(path);
  }
  return out;
}

const FILES = [...sources("src"), ...sources("drivers")].map((f) => ({
  file: relative(ROOT, join(ROOT, f)),
  text: readFileSync(join(ROOT, f), "utf8"),
}));

function writers(pattern: RegExp): string[] {
  return FILES.filter((f) => pattern.test(f.text)).map((f) => f.file);
}

describe("each policy once", () => {
  it("only src/core/scryptHash.ts writes or parses the scrypt hash format", () => {
    // A template that writes `scrypt$N$...`, or a RegExp that reads it.
    expect(writers(/`scrypt\$\$\{|\/\^scrypt\\\$/)).toEqual(["src/core/scryptHash.ts"]);
  });

  it("only src/core/days.ts spells a day's shape YYYY-MM-DD", () => {
    expect(writers(/\(?\\d\{4\}\)?-\(?\\d(\{2\}|\\d)\)?-\(?\\d(\{2\}|\\d)\)?\$/)).toEqual([
      "src/core/days.ts",
    ]);
  });

  it("only src/core/days.ts builds a local day from a Date", () => {
    expect(writers(/getFullYear\(\)\}-/)).toEqual(["src/core/days.ts"]);
  });

  it("no amount is formatted with toFixed(2)", () => {
    expect(writers(/toFixed\(2\)/)).toEqual([]);
  });
});
