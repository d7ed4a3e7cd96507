/**
 * Issue 43: a PIN or badge added to the config the documented way takes effect on reload (SIGHUP, what
 * `systemctl reload vendd` sends), and until then the console never claims none is configured when the
 * config file has one: the built daemon (`vendd run`) against the emulator, the console over a real PTY.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hashBadgeUid } from "../../drivers/nfc/badges.js";
import { hashPin } from "../../src/core/pin.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { CANARY_PIN, CANARY_SECRET, PtyConsole, Supervised, writeUnit } from "../support/console.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

const BADGE_UID = "04A1B2C3D4E5F6";

let dir: string;
let emu: Emulator | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends SIGHUP to the running daemon and waits for its reload line after `from`. */
async function reload(daemon: Supervised, from: number): Promise<string> {
  daemon.current.child.kill("SIGHUP");
  return daemon.current.waitFor(/"msg":"reload: applied"/, from, 10_000);
}

describe.skipIf(!HAVE_SOCAT)("console login after a reload", () => {
  it("a PIN, then a badge, added to the config work after SIGHUP; before it the console says to reload", async () => {
    requireBuiltCli();
    dir = mkdtempSync(join(tmpdir(), "vendd-relogin-"));
    emu = await startEmulator({
      pollDelayMs: 50,
      seed: { integrators: [{ clientId: "console-client", clientSecret: CANARY_SECRET }] },
    });
    const pinHash = await hashPin(CANARY_PIN, 1024);
    const files = writeUnit(dir, emu, pinHash);
    const withPin = readFileSync(files.config, "utf8");
    // Started without a PIN and without badges.
    writeFileSync(files.config, withPin.replace(/pinHash: ".*"/, "pinHash: null"));
    const daemon = new Supervised(
      ["run", "--config", files.config, "--secrets", files.secrets],
      join(dir, "daemon.pid"),
    );
    cleanups.push(() => daemon.stop());
    await daemon.waitRuns(1, "unit in service");
    const c = PtyConsole.start(join(dir, "control.sock"));
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /in\s+the\s+running\s+configuration[\s\S]*systemctl\s+reload\s+vendd/);

    // The technician adds the PIN hash to the file: not read yet, and the console says so (not "none").
    writeFileSync(files.config, withPin);
    const pending = await c.line(CANARY_PIN, /has\s+not\s+read\s+yet[\s\S]*PIN or badge: /);
    // Wrapped at 80 columns, read whole.
    expect(pending.replace(/\s+/g, " ")).toContain(
      `the config file ${files.config} has a console PIN or badge`,
    );
    expect(pending).toMatch(/systemctl\s+reload\s+vendd/);
    expect(pending).not.toMatch(/in\s+the\s+running\s+configuration/);

    // systemctl reload vendd (SIGHUP): applied at once, no restart.
    const applied = await reload(daemon, daemon.current.mark());
    expect(applied).toMatch(/"applied":\["console\.pinHash"\]/);
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    await c.line("logout", "logged out");

    // A badge added the same way logs in after the next reload; the running session is not disturbed.
    const badge = await hashBadgeUid(BADGE_UID, 1024);
    writeFileSync(files.config, `${withPin}\nnfc:\n  badges:\n    - { name: alice, hash: "${badge}" }\n`);
    await c.line(BADGE_UID, "wrong PIN or unknown badge");
    const badgeApplied = await reload(daemon, daemon.current.mark());
    expect(badgeApplied).toMatch(/"applied":\["nfc\.badges"\]/);
    await c.line(BADGE_UID, /logged in[\s\S]*vendd> /);
    expect(daemon.runs).toBe(1);
    expect(daemon.all).not.toContain(CANARY_PIN);
    expect(daemon.all).not.toContain(BADGE_UID);
    expect(daemon.all).not.toMatch(/restart.*console\.pinHash/);
  }, 60_000);
});
