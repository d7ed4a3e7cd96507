/**
 * The unit's metrics for node_exporter's textfile collector (issue 45): the built `vendd run` with
 * `metrics.textfile` writes the file at start and again every `intervalSeconds`, atomically (no temporary
 * file the collector would read is left, the file is always whole), mode 0644; read back with the strict
 * Prometheus text parser (test/support/promText.ts). It says in service, then out of service with its
 * reason when a technician switches service mode on; no series is per sale. A directory that does not
 * exist is said once and the unit keeps selling; a textfile path not ending in .prom is refused by config
 * validation.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hashPin } from "../../src/core/pin.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { vendd } from "../support/cli.js";
import { CANARY_PIN, CANARY_SECRET, PtyConsole, Supervised, writeUnit } from "../support/console.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";
import { parsePromText, sampleValue } from "../support/promText.js";

let dir = "";
let emu: Emulator | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  await emu?.close();
  emu = undefined;
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

async function unitWith(metrics: string) {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), "vendd-metrics-"));
  emu = await startEmulator({
    pollDelayMs: 50,
    seed: { integrators: [{ clientId: "console-client", clientSecret: CANARY_SECRET }] },
  });
  const files = writeUnit(dir, emu, await hashPin(CANARY_PIN, 1024), [`metrics: ${metrics}`]);
  const daemon = new Supervised(
    ["run", "--config", files.config, "--secrets", files.secrets],
    join(dir, "daemon.pid"),
  );
  cleanups.push(() => daemon.stop());
  return { files, daemon };
}

/** The textfile parsed, or null while it is not there yet. */
function read(path: string) {
  if (!existsSync(path)) return null;
  return parsePromText(readFileSync(path, "utf8"));
}

describe("the unit's metrics textfile", () => {
  it.skipIf(!HAVE_SOCAT)(
    "is written atomically for node_exporter, follows the unit's service state and holds no per-sale series",
    async () => {
      const textDir = mkdtempSync(join(tmpdir(), "vendd-node-exporter-"));
      cleanups.push(async () => rmSync(textDir, { recursive: true, force: true }));
      const textfile = join(textDir, "vendd.prom");
      const { daemon } = await unitWith(`{ textfile: ${textfile}, intervalSeconds: 5 }`);
      await daemon.waitRuns(1, "unit in service", 30_000);
      await expect
        .poll(
          () =>
            read(textfile) === null
              ? null
              : sampleValue(read(textfile) ?? new Map(), "vendd_unit_in_service"),
          {
            timeout: 15_000,
          },
        )
        .toBe(1);
      const f = read(textfile) ?? new Map();
      expect(sampleValue(f, "vendd_unit_out_of_service_reason", { reason: "serviceMode" })).toBe(0);
      expect(sampleValue(f, "vendd_unit_unresolved_sessions")).toBe(0);
      expect(f.get("vendd_unit_in_service")?.type).toBe("gauge");
      expect(statSync(textfile).mode & 0o777).toBe(0o644);
      // Only the file itself: the temporary one does not end in .prom and is gone after the rename.
      expect(readdirSync(textDir)).toEqual(["vendd.prom"]);
      const written = sampleValue(f, "vendd_unit_metrics_written_time_seconds") ?? 0;
      expect(written * 1000).toBeGreaterThan(Date.now() - 60_000);

      // Out of service from the technician console: the next write says so, with the reason.
      const c = PtyConsole.start(join(dir, "control.sock"));
      cleanups.push(() => c.stop("SIGKILL"));
      await c.waitFor("PIN or badge: ");
      await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
      await c.line("service out restocking", /vendd> /);
      await expect
        .poll(
          () =>
            sampleValue(read(textfile) ?? new Map(), "vendd_unit_out_of_service_reason", {
              reason: "serviceMode",
            }),
          {
            timeout: 15_000,
          },
        )
        .toBe(1);
      const out = read(textfile) ?? new Map();
      expect(sampleValue(out, "vendd_unit_in_service")).toBe(0);
      // Written again later: the time moves on.
      expect(sampleValue(out, "vendd_unit_metrics_written_time_seconds") ?? 0).toBeGreaterThan(written);
      // No label names a session, an order or a price; the only labels are bounded ones.
      for (const family of out.values())
        for (const s of family.samples)
          expect(
            Object.keys(s.labels).filter((k) => !["reason", "version"].includes(k)),
            s.name,
          ).toEqual([]);
    },
    90_000,
  );

  it("a directory that does not exist is said once; the unit still goes in service", async () => {
    const missing = join(tmpdir(), `vendd-no-such-dir-${process.pid}`, "vendd.prom");
    const { daemon } = await unitWith(`{ textfile: ${missing}, intervalSeconds: 5 }`);
    await daemon.waitRuns(1, "unit in service", 30_000);
    await daemon.current.waitFor("cannot be written (ENOENT)", 0, 15_000);
    await new Promise((r) => setTimeout(r, 6_000)); // one more round: not said again
    expect(daemon.all.match(/metrics textfile .* cannot be written/g)).toHaveLength(1);
    expect(existsSync(missing)).toBe(false);
  }, 90_000);

  it("a textfile that node_exporter would not read is refused by config validation", async () => {
    requireBuiltCli();
    dir = mkdtempSync(join(tmpdir(), "vendd-metrics-"));
    mkdirSync(join(dir, "x"));
    emu = await startEmulator({
      seed: { integrators: [{ clientId: "console-client", clientSecret: CANARY_SECRET }] },
    });
    const files = writeUnit(dir, emu, await hashPin(CANARY_PIN, 1024), [
      `metrics: { textfile: ${join(dir, "x", "vendd.txt")} }`,
    ]);
    const r = await vendd(["config", "validate", files.config]);
    expect(r.code).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain("must end in .prom");
  }, 30_000);
});
