/**
 * Issue 43: the console's messages and errors wrap at the terminal's width instead of being cut, and a
 * daemon that cannot be reached is said once, with the next step, before the PIN prompt. The built CLI's
 * console over a real PTY (80 columns: the PTY does not say).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hashPin } from "../../src/core/pin.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { CANARY_PIN, CANARY_SECRET, PtyConsole, Supervised, writeUnit } from "../support/console.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

let dir: string;
let emu: Emulator | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  await emu?.close();
  emu = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** The screen's lines (CR LF, cursor moves of readline dropped). */
function lines(text: string): string[] {
  return text
    .replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, "g"), "")
    .split(/\r?\n/)
    .map((l) => l.replace(/\r/g, ""));
}

/** Wrapped text read as one line (a continuation is a line break and an indent). */
function flat(text: string): string {
  return lines(text).join(" ").replace(/\s+/g, " ");
}

describe.skipIf(!HAVE_SOCAT)("console messages", () => {
  it("says once, before the PIN prompt, that the daemon cannot be reached and what to do", async () => {
    requireBuiltCli();
    dir = mkdtempSync(join(tmpdir(), "vendd-conmsg-"));
    const socket = join(dir, "state-dir", "control.sock");
    const c = PtyConsole.start(socket);
    cleanups.push(() => c.stop("SIGKILL"));
    const before = await c.waitFor("PIN or badge: ");
    const head = before.slice(0, before.indexOf("PIN or badge: "));
    expect(flat(head)).toContain(
      `cannot reach the daemon at ${socket} (no control socket there): is vendd running? systemctl status vendd`,
    );
    expect(head.match(/cannot reach the daemon/g)).toHaveLength(1);
    for (const l of lines(head)) expect(l.length).toBeLessThanOrEqual(80);
    expect(head).not.toContain("~");
    // A PIN typed anyway: the same one message, whole, and the prompt again.
    const again = await c.line(CANARY_PIN, /systemctl\s+status\s+vendd[\s\S]*PIN or badge: /);
    expect(again.match(/cannot reach the daemon/g)).toHaveLength(1);
    expect(again).not.toContain(CANARY_PIN);
  }, 30_000);

  it("wraps a daemon's error longer than the terminal instead of cutting it", async () => {
    requireBuiltCli();
    dir = mkdtempSync(join(tmpdir(), "vendd-conmsg-"));
    emu = await startEmulator({
      pollDelayMs: 50,
      seed: { integrators: [{ clientId: "console-client", clientSecret: CANARY_SECRET }] },
    });
    const files = writeUnit(dir, emu, await hashPin(CANARY_PIN, 1024));
    const daemon = new Supervised(
      ["run", "--config", files.config, "--secrets", files.secrets],
      join(dir, "daemon.pid"),
    );
    cleanups.push(() => daemon.stop());
    await daemon.waitRuns(1, "unit in service");
    const c = PtyConsole.start(join(dir, "control.sock"));
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    const id = `vm-c-${"7".repeat(58)}`;
    const answer = await c.line(`journal ${id}`, /in\s+the\s+journal[\s\S]*vendd> /);
    const shown = answer.slice(answer.indexOf("\n") + 1, answer.lastIndexOf("vendd> "));
    expect(flat(shown)).toContain(`no session ${id} in the journal`);
    for (const l of lines(shown)) expect(l.length).toBeLessThanOrEqual(80);
    expect(shown).not.toContain("~");
  }, 60_000);
});
