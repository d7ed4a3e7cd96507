/**
 * Issue 36 defect: the console's `service in` during a DEX read recomputed the out-of-service reason without
 * the read's, so the cashless device was enabled on the MDB side while the machine's DEX port was in use.
 * The built `vendd run` reads a silent machine (its ENQs unanswered: the read runs for seconds); the
 * technician takes the unit out and back in service over the console's PTY; the unit stays out of service
 * ("Reading machine audit") until the read ends, and only then comes back.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { hashPin } from "../../src/core/pin.js";
import { CANARY_PIN, PtyConsole } from "../support/console.js";
import { HAVE_SOCAT } from "../support/daemon.js";
import { unitWithDex } from "../support/dexUnit.js";

let pinHash: string;
const cleanups: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  pinHash = await hashPin(CANARY_PIN, 1024);
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

/** The daemon's log messages (JSON lines) in order, with their reason when they carry one. */
function messages(out: string): string[] {
  const list: string[] = [];
  for (const line of out.split("\n")) {
    try {
      const o = JSON.parse(line) as { msg?: unknown; reason?: unknown };
      if (typeof o.msg === "string")
        list.push(typeof o.reason === "string" ? `${o.msg}: ${o.reason}` : o.msg);
    } catch {
      // not a log line
    }
  }
  return list;
}

describe.skipIf(!HAVE_SOCAT)("service in during a DEX read", () => {
  it("keeps the unit out of service until the read ends", async () => {
    // three session attempts with backoff against a silent machine: the read runs for about ten seconds
    const { sim, socket, daemon } = await unitWithDex(cleanups, pinHash, {
      silent: true,
      attempts: 3,
      prefix: "vendd-dex-service-",
    });
    await expect.poll(() => sim.vmd.stats.enqIgnored, { timeout: 20_000 }).toBeGreaterThan(0);
    const c = PtyConsole.start(socket, 300);
    cleanups.push(() => c.stop("SIGKILL"));
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);
    await c.line("service out Restocking", /vendd> /);
    await c.line("service in", /vendd> /);
    await expect
      .poll(() => messages(daemon.current.out).includes("DEX read"), { timeout: 30_000 })
      .toBe(true);
    const log = messages(daemon.current.out);
    const read = log.indexOf("DEX read");
    const out = log.lastIndexOf("out of service: Restocking");
    expect(out).toBeGreaterThan(-1);
    // the console's request was handled while the read ran (else this test proves nothing)
    expect(out).toBeLessThan(read);
    // after "service in" the unit stayed out of service for the read, and came back only when the read
    // ended (its "back in service" is logged just before the read's own line); on the old code "service in"
    // brought it back at once
    expect(log.slice(out + 1, read)).toEqual(["out of service: Reading machine audit", "back in service"]);
  }, 90_000);
});
