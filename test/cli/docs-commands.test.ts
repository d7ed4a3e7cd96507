/**
 * Issue 32, defect 7: every `vendd ...` command line in README.md and docs/**\/*.md parses with the CLI's own
 * option tables (src/cli/commands.ts, the tables `vendd --help` is rendered from), so the docs cannot name
 * an option or a subcommand that does not exist. A line that does not parse fails the test naming its file
 * and line. New doc files are picked up as they appear (the folder is walked).
 *
 * Command lines are those in fenced code blocks (after `$ `, `sudo ` or environment assignments) and inline
 * code spans that start with `vendd `; a synopsis (with `[`, `<`, `|` or `...`) is not a command line.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import type { CommandHelp } from "../../src/cli/commandTable.js";

const ROOT = process.cwd();

function docFiles(): string[] {
  const out = [join(ROOT, "README.md")];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith(".md")) out.push(join(dir, e.name));
    }
  };
  walk(join(ROOT, "docs"));
  return out;
}

interface DocLine {
  file: string;
  line: number;
  text: string;
}

/** The `vendd ...` command lines of a Markdown text. */
function commandLines(file: string, text: string): DocLine[] {
  const out: DocLine[] = [];
  let fenced = false;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] ?? "";
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) {
      const start = i;
      while (line.endsWith("\\") && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i] ?? ""}`;
      const cmd = line
        .replace(/\s#.*$/, "")
        .trim()
        .replace(/^\$\s+/, "")
        .replace(/^sudo\s+(-u\s+\S+\s+)?/, "")
        .replace(/^([A-Z_][A-Z0-9_]*=\S*\s+)+/, "");
      if (/^vendd\s/.test(cmd)) out.push({ file, line: start + 1, text: cmd });
      continue;
    }
    for (const m of line.matchAll(/`(vendd [^`]+)`/g)) out.push({ file, line: i + 1, text: m[1] ?? "" });
  }
  return out.filter((l) => !/[[\]<>|…]|\.\.\./.test(l.text));
}

/** Splits a command line like a POSIX shell would (quotes, no expansion). */
function words(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3] ?? "");
  return out;
}

/** The literal words of a help line (`fleet user add NAME` → fleet, user, add). */
function fixed(c: CommandHelp): string[] {
  const out: string[] = [];
  for (const w of c.words.split(" ")) {
    if (!/^[a-z][a-z-]*$/.test(w)) break;
    out.push(w);
  }
  return out;
}

/** Why `text` does not parse, or null when it does. */
function refusal(text: string): string | null {
  const args = words(text).slice(1);
  // The top level: its help and version (src/cli/main.ts).
  if (args.length === 1 && ["--help", "-h", "help", "--version", "-V", "version"].includes(args[0] ?? ""))
    return null;
  const candidates = COMMANDS.map((c) => ({ c, f: fixed(c) }))
    .filter(({ f }) => f.every((w, i) => args[i] === w))
    .sort((a, b) => b.f.length - a.f.length);
  const best = candidates[0];
  if (best === undefined) return `no command '${args.slice(0, 2).join(" ")}'`;
  // A command may have several help lines over one table (fleet serve, units...): any that parses will do.
  const tables = candidates.filter((x) => x.f.length === best.f.length);
  let why = "";
  for (const { c, f } of tables) {
    try {
      parseArgs({ args: args.slice(f.length), options: c.options, strict: true, allowPositionals: true });
      return null;
    } catch (err) {
      why = err instanceof Error ? err.message : String(err);
    }
  }
  return why;
}

describe("every vendd command line in README.md and docs/ parses with the CLI's option tables", () => {
  const files = docFiles();

  it("finds the command lines (README and the role manuals have some)", () => {
    const all = files.flatMap((f) => commandLines(f, readFileSync(f, "utf8")));
    expect(all.length).toBeGreaterThan(20);
  });

  it("the checker refuses an unknown option and an unknown command", () => {
    expect(refusal("vendd fleet serve --no-such-option")).toMatch(/no-such-option/);
    expect(refusal("vendd frobnicate")).toMatch(/no command/);
    expect(refusal("vendd fleet user add mia --role manager --db fleet.db")).toBeNull();
  });

  for (const file of files) {
    it(relative(ROOT, file), () => {
      const bad = commandLines(file, readFileSync(file, "utf8"))
        .map((l) => ({ l, why: refusal(l.text) }))
        .filter((x) => x.why !== null)
        .map(({ l, why }) => `${relative(ROOT, l.file)}:${l.line}: ${l.text}: ${why}`);
      expect(bad).toEqual([]);
    });
  }
});
