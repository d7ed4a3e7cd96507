import { chmodSync, closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { seededRandom } from "../core/random.js";
import { duplicateKeys, MAX_FILE_BYTES, parseStructured, readStructuredFile } from "./files.js";
import { rawV10, V10_ENV } from "./fixtures.test-support.js";
import { ConfigError, loadConfig } from "./load.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(content: string | Buffer, mode = 0o600): string {
  const path = join(dir, `f${n++}.yaml`);
  writeFileSync(path, content);
  chmodSync(path, mode);
  return path;
}

function refusal(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

const label = { label: "(config file)" };

/** Control, format and separator characters in `text`, line breaks between lines aside. */
const unsafe = (text: string) =>
  text
    .split("\n")
    .join("")
    .match(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu) ?? [];
/** A minimal valid config as YAML text. */
const VALID = JSON.stringify(rawV10());

describe("config files: size limit", () => {
  it("refuses a file above the limit from its size, naming the file and the limit", () => {
    // A 4 GiB sparse file: reading it whole would take seconds and gigabytes; the refusal takes neither.
    const path = join(dir, "huge.yaml");
    const fd = openSync(path, "w");
    ftruncateSync(fd, 4 * 1024 ** 3);
    closeSync(fd);
    const err = refusal(() => loadConfig(path, { env: V10_ENV }));
    expect(err.code).toBe("config_unreadable");
    expect(err.issues).toEqual([
      {
        path: "(config file)",
        message: `${path} is 4294967296 bytes; config and secrets files may be at most ${MAX_FILE_BYTES} bytes`,
      },
    ]);
  });

  it("stops reading one byte past the limit when the size says nothing (a device)", () => {
    const read = readStructuredFile("/dev/zero", label);
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.issues[0]?.message).toBe(
      `/dev/zero grew while being read or is not a regular file; config and secrets files may be at most ${MAX_FILE_BYTES} bytes`,
    );
  });

  it("applies the same limit to the secrets file, and the limit is an option", () => {
    const config = file(VALID);
    const secrets = file(`v10: { clientSecret: "${"x".repeat(1000)}" }\n`);
    const err = refusal(() => loadConfig(config, { secretsFile: secrets, env: {}, maxFileBytes: 1000 }));
    expect(err.issues.map((i) => i.path)).toEqual(["secrets.file", "secrets.v10.clientSecret"]);
    expect(err.issues[0]?.message).toContain("may be at most 1000 bytes");
    expect(loadConfig(config, { secretsFile: secrets, env: {} }).secrets.v10?.clientSecret).toHaveLength(
      1000,
    );
  });
});

describe("config files: parsing stays linear", () => {
  // One case where wall time is the point: the parser's own unique-keys check compared every key with
  // every earlier one (this file took minutes). No clock can be injected into the YAML parser, so the
  // bound is elapsed time, generous because this machine is shared by parallel test runs (measured: about
  // 0.6 s idle, 2.5 s at load 6); the key count below is the load-independent part of the proof.
  it("parses a 1 MiB file of distinct keys within seconds, checking each key once", () => {
    const lines: string[] = [];
    let size = 0;
    while (size < MAX_FILE_BYTES - 32) {
      const line = `key${lines.length}: ${lines.length}\n`;
      lines.push(line);
      size += line.length;
    }
    const text = lines.join("");
    const path = file(text);
    const started = performance.now();
    const read = readStructuredFile(path, label);
    const elapsed = performance.now() - started;
    expect(read.ok).toBe(true);
    console.log(`1 MiB of keys (${lines.length}) read and parsed in ${elapsed.toFixed(0)} ms`);
    expect(elapsed).toBeLessThan(10_000);
    const doc = parseDocument(text, { uniqueKeys: false, stringKeys: true });
    expect(duplicateKeys(doc)).toEqual({ offsets: [], keys: lines.length });
    expect(lines.length).toBeGreaterThan(60_000);
  }, 30_000);

  it("still refuses duplicate keys, in block and flow mappings, at the second key's position", () => {
    const r = parseStructured("a: 1\nb:\n  c: 1\n  d: {e: 1, e: 2}\n  c: 3\nb: 2\n", "dup.yaml", label);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.message)).toEqual([
      "dup.yaml: syntax error at line 4, column 13: DUPLICATE_KEY (a key appears twice in the same mapping)",
      "dup.yaml: syntax error at line 5, column 3: DUPLICATE_KEY (a key appears twice in the same mapping)",
      "dup.yaml: syntax error at line 6, column 1: DUPLICATE_KEY (a key appears twice in the same mapping)",
    ]);
    // Keys compare as the property names they become: 1 and "1" collide, the same key in two maps does not.
    expect(parseStructured("1: a\n'1': b\n", "d.yaml", label).ok).toBe(false);
    expect(parseStructured("a: {k: 1}\nb: {k: 1}\n", "d.yaml", label)).toEqual({
      ok: true,
      value: { a: { k: 1 }, b: { k: 1 } },
      keyLine: expect.any(Function),
    });
  });

  it("reports nesting deeper than the parser allows as a syntax error, not a crash", () => {
    const r = parseStructured("[".repeat(10_000), "deep.yaml", label);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.length).toBeLessThanOrEqual(11);
    expect(r.issues[0]?.message).toMatch(/^deep\.yaml: syntax error at line 1, column \d+: [A-Z_]+/);
  });
});

describe("config files: errors never show file content", () => {
  const CANARY = "SorlmvmifcW43fIu1brylqOa0ioENQ_b";

  it("gives file, line, column and code only for a syntax error", () => {
    for (const text of [
      `unit:\n  id: vm-1\n  name: |x ${CANARY}\n`,
      `unit: >-${CANARY}\n`,
      `unit: !${CANARY}!x b\n`,
      `unit: {id: "${CANARY}\n`,
    ]) {
      const r = parseStructured(text, "c.yaml", label);
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      for (const issue of r.issues) {
        expect(issue.message).toMatch(
          /^c\.yaml: syntax error at line \d+, column \d+: [A-Z_]+( \([^)]*\))?$/,
        );
        expect(issue.message).not.toContain(CANARY.slice(0, 8));
      }
    }
  });

  it("caps and escapes binary junk: unknown keys, syntax errors, file names", () => {
    const random = seededRandom(7);
    const junk = (len: number) =>
      Buffer.from(Array.from({ length: len }, () => Math.floor(random() * 256)).filter((b) => b !== 0x0a));
    // Junk as a key (an "unknown key" error shows the key), then junk lines (syntax errors).
    const keyed = file(
      Buffer.concat([
        Buffer.from(`${VALID.slice(0, -1)}, "\x1b[2J${"\u202e".repeat(3)}`),
        junk(900).filter((b) => b !== 0x22 && b !== 0x5c),
        Buffer.from('": 1}\n'),
      ]),
    );
    const lines = file(
      Buffer.concat(Array.from({ length: 40 }, () => Buffer.concat([junk(300), Buffer.from("\n")]))),
    );
    for (const path of [keyed, lines]) {
      const err = refusal(() => loadConfig(path, { env: V10_ENV }));
      expect(err.message.length).toBeLessThan(2500);
      // No control, format or separator character reaches the console; the junk shows escaped.
      expect(unsafe(err.message)).toEqual([]);
    }
    const keyedErr = refusal(() => loadConfig(keyed, { env: V10_ENV }));
    expect(keyedErr.issues).toHaveLength(1);
    expect(keyedErr.issues[0]?.path).toMatch(
      /^\\x1b\[2J\\u\{202e\}\\u\{202e\}\\u\{202e\}.*…\(\d+ more characters\)$/,
    );
    const nasty = join(dir, `name\x1b]0;title\x07${"n".repeat(300)}.yaml`);
    const missing = refusal(() => loadConfig(nasty, { env: V10_ENV }));
    expect(unsafe(missing.message)).toEqual([]);
    expect(missing.message).toContain("name\\x1b]0;title\\x07");
    expect(missing.message).toContain("more characters");
  });
});

describe("secrets file permissions", () => {
  const config = file(VALID);
  const secrets = (mode: number) => file(`v10: { clientSecret: s3cr3t-value }\n`, mode);

  it("refuses a secrets file group or others may write", () => {
    for (const mode of [0o666, 0o620, 0o602, 0o622]) {
      const err = refusal(() => loadConfig(config, { secretsFile: secrets(mode), env: {} }));
      expect(err.issues).toEqual([
        {
          path: "secrets.file",
          message: expect.stringMatching(
            new RegExp(`has mode 0${mode.toString(8)}: group or others may write it; chmod 600 it$`),
          ),
        },
      ]);
      expect(err.message).not.toContain("s3cr3t");
    }
  });

  it("accepts one group or others may read, with a warning; 0600 and 0400 without", () => {
    for (const mode of [0o640, 0o604, 0o644]) {
      const { warnings, secrets: s } = loadConfig(config, { secretsFile: secrets(mode), env: {} });
      expect(warnings).toEqual([
        `secrets file ${join(dir, `f${n - 1}.yaml`)} has mode 0${mode.toString(8)}; it should be 0600 (chmod 600)`,
      ]);
      expect(s.v10?.clientSecret).toBe("s3cr3t-value");
    }
    for (const mode of [0o600, 0o400]) {
      expect(loadConfig(config, { secretsFile: secrets(mode), env: {} }).warnings).toEqual([]);
    }
  });
});
