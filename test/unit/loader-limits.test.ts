/**
 * Issue 30, defect 7 (with issue 32, defect 3): every YAML or JSON file vendd reads goes through one loader
 * (src/config/files.ts) with the size limit and the linear duplicate-key check. Each file kind is fed about
 * 1 MiB of keys (just under the limit: it is parsed and refused for its keys) and a file just over the
 * limit (refused from its size), and must answer in about a second. Before, the reporting settings and
 * the fleet config used the parser's quadratic unique-keys check (40,000 keys: 52 s) and had no limit.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { MAX_FILE_BYTES } from "../../src/config/files.js";
import { rawV10 } from "../../src/config/fixtures.test-support.js";
import { loadConfig } from "../../src/config/load.js";
import { loadFleetConfig } from "../../src/fleet/config.js";
import { loadReportingSettings } from "../../src/fleet/reconcile/settings.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-loader-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** About `bytes` of distinct keys `kNNNNNN: 1`, one a line. */
function manyKeys(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `k${String(i).padStart(7, "0")}: 1\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join("");
}

const UNDER = manyKeys(MAX_FILE_BYTES - 64);
const OVER = manyKeys(MAX_FILE_BYTES + 64);

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

/** Runs `load` (which must throw), returns how long it took and what it said. */
function timed(load: () => unknown): { ms: number; message: string } {
  const started = performance.now();
  try {
    load();
  } catch (err) {
    return { ms: performance.now() - started, message: err instanceof Error ? err.message : String(err) };
  }
  throw new Error("expected a refusal");
}

const measured: string[] = [];
afterAll(() => {
  process.stdout.write(`loader, 1 MiB of keys: ${measured.join("; ")}\n`);
});

/** Each kind: the loader it uses, given the path of the file with the keys. */
const KINDS: Record<string, (path: string) => unknown> = {
  "unit config": (path) => loadConfig(path, { env: {} }),
  "unit secrets": (path) =>
    loadConfig(file("unit.yaml", stringify(rawV10())), { secretsFile: path, env: {} }),
  "fleet config": (path) => loadFleetConfig(path, {}),
  "fleet secrets": (path) => loadFleetConfig(file("fleet-with-secrets.yaml", `secretsFile: ${path}\n`), {}),
  "reporting settings": (path) => loadReportingSettings(path, {}),
  "reporting secrets": (path) =>
    loadReportingSettings(
      file(
        "reporting-with-secrets.yaml",
        `baseUrl: http://127.0.0.1:9/r\ntokenUrl: http://127.0.0.1:9/t\nclientId: c\nsecretsFile: ${path}\n`,
      ),
      {},
    ),
};

describe("every YAML or JSON file kind: 1 MiB of keys answered in about a second", () => {
  for (const [kind, load] of Object.entries(KINDS)) {
    it(kind, () => {
      const under = timed(() => load(file(`${kind}-under.yaml`, UNDER)));
      expect(under.message).toMatch(/unknown key|unrecognized key/i);
      // Secrets files: the keys are counted, never named.
      if (kind.endsWith("secrets")) expect(under.message).not.toContain("k0000001");
      const over = timed(() => load(file(`${kind}-over.yaml`, OVER)));
      expect(over.message).toMatch(/may be at most 1048576 bytes/);
      measured.push(`${kind} ${Math.round(under.ms)} ms (over the limit: ${Math.round(over.ms)} ms)`);
      // About a second on a quiet machine (0.5 s); 4 s measured with 9 agents on 2 cores: a generous bound.
      expect(under.ms).toBeLessThan(10_000);
      expect(over.ms).toBeLessThan(1_000);
    }, 60_000);
  }
});
