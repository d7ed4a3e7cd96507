/**
 * `vendd screen` against a running daemon (issue 46): the built `vendd run` (check-in first: the idle screen
 * carries the check-in code) draws its idle screen into a file
 * standing in for an SPI panel's framebuffer (240x240 RGB565, the geometry in a fake sysfs directory); then
 * `vendd screen --png` as its own process asks the daemon over the control socket (by `--socket` and by
 * `--config`), and the technician console's `screen` over a real PTY shows the same screen as text. The
 * framebuffer's pixels and the PNG are each decoded by jsQR to the unit's check-in link.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PNG } from "pngjs";
import { afterEach, describe, expect, it } from "vitest";
import { fakeFramebuffer, readFramebuffer } from "../../drivers/display/framebuffer.test-support.js";
import { decodePng, decodeRgba } from "../../drivers/display/qr.test-support.js";
import { hashPin } from "../../src/core/pin.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { vendd } from "../support/cli.js";
import { CANARY_PIN, CANARY_SECRET, PtyConsole, Supervised, writeUnit } from "../support/console.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

const BEACON = "480000000000046";
const LINK = `servicepos://pos?id=${BEACON}&source=qr`;

let dir = "";
let emu: Emulator | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  await emu?.close();
  emu = undefined;
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

/** The readline's cursor moves dropped, lines joined: what a technician reads. */
function plain(text: string): string {
  return text.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, "g"), "").replace(/\r/g, "");
}

describe.skipIf(!HAVE_SOCAT)("vendd screen against a running daemon with a framebuffer display", () => {
  it("the CLI's PNG and the console's text show the idle screen; both pictures decode to the check-in link", async () => {
    requireBuiltCli();
    dir = mkdtempSync(join(tmpdir(), "vendd-screen-"));
    emu = await startEmulator({
      pollDelayMs: 50,
      seed: { integrators: [{ clientId: "console-client", clientSecret: CANARY_SECRET }] },
    });
    const fb = fakeFramebuffer(240, 240, 16);
    cleanups.push(async () => rmSync(join(fb.device, ".."), { recursive: true, force: true }));
    const files = writeUnit(dir, emu, await hashPin(CANARY_PIN, 1024), ["engine: { flow: checkin }"], {
      display: `{ kind: framebuffer, device: ${fb.device}, sysfs: ${fb.sysfs} }`,
      beaconId: BEACON,
    });
    const daemon = new Supervised(
      ["run", "--config", files.config, "--secrets", files.secrets],
      join(dir, "daemon.pid"),
    );
    cleanups.push(() => daemon.stop());
    await daemon.waitRuns(1, "unit in service", 30_000);

    // What the panel shows: the daemon's own frame in the device file.
    await expect
      .poll(() => decodeRgba(readFramebuffer(fb), fb.width, fb.height), { timeout: 15_000 })
      .toBe(LINK);

    // `vendd screen` as a process, by the socket and by the unit's config.
    const socket = join(dir, "control.sock");
    const png = join(dir, "screen.png");
    const bySocket = await vendd(["screen", "--socket", socket, "--png", png]);
    expect(bySocket.stderr).toBe("");
    expect(bySocket.code).toBe(0);
    expect(bySocket.stdout).toContain("display framebuffer, screen idle (240x240):\n");
    expect(bySocket.stdout).toContain(`[QR code: ${LINK}]`);
    expect(bySocket.stdout).toContain(`picture written to ${png}\n`);
    const picture = PNG.sync.read(readFileSync(png));
    expect([picture.width, picture.height]).toEqual([240, 240]);
    expect(decodePng(readFileSync(png))).toBe(LINK);

    const byConfig = await vendd(["screen", "--config", files.config]);
    expect(byConfig.code).toBe(0);
    expect(byConfig.stdout).toBe(bySocket.stdout.replace(`picture written to ${png}\n`, ""));

    // No daemon at the socket: said with the next step, exit 1.
    const nobody = await vendd(["screen", "--socket", join(dir, "nobody.sock")]);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain("is vendd running (systemctl status vendd)?");

    // The technician console over a real PTY.
    const c = PtyConsole.start(socket);
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    const shown = plain(await c.line("screen", /source=qr\][\s\S]*vendd> /));
    expect(shown).toContain("display framebuffer, screen idle (240x240):");
    expect(shown.replace(/\s+/g, "")).toContain(`[QRcode:${LINK}]`);
  }, 90_000);
});
