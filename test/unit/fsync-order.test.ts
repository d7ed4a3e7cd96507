import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  readJournal,
  runScenario,
  startWorld,
  Unit,
  type UnitShape,
  type World,
} from "../../src/chaos/index.js";
import type { IntentView, VendView } from "../../src/chaos/journalView.js";
import {
  analyseApprovals,
  analyseTrace,
  type IntentResolver,
  straceArgs,
  straceAvailable,
} from "../../src/chaos/straceOrder.js";
import { seededRandom } from "../../src/core/random.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";

// reliability.md §7 rung 1 (CI): the ordering proof under strace. For every payment mutation request of a
// vend (V10: POST /v10/payments, …/capture, …/cancel; older interface: ReservationStart/Capture/Cancel), a
// fsync of the journal's WAL completes before the first byte of the request is written to the socket; for
// V10 the WAL frame holding the intent row with the request's idempotency key was written and synced first.
// Needs Debian's `strace` (CI installs it: apt-get install strace); skipped with a message without it.

const HAVE_STRACE = straceAvailable();
if (!HAVE_STRACE)
  console.warn("fsync-order.test.ts skipped: strace is not installed (apt-get install strace)");

let world: World;
let dir: string;
beforeAll(async () => {
  requireBuiltCli();
  world = await startWorld(50);
  dir = mkdtempSync(join(tmpdir(), "vendd-strace-"));
});
afterAll(async () => {
  await world?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `vends` vends with the daemon under strace, stops it cleanly; returns the trace and the journal. */
async function tracedRun(
  shape: UnitShape,
  vends: number,
  seed: number,
): Promise<{ trace: string; wal: string; intents: IntentView[]; vends: VendView[] }> {
  const unit = Unit.create(world, shape);
  const out = join(dir, `${shape.driver}-${shape.flow}.trace`);
  try {
    await unit.start({ prefix: straceArgs(out), readyTimeoutMs: 60_000 });
    const { records } = await runScenario(unit, { vends, random: seededRandom(seed), successRate: 0.6 });
    expect(records.filter((r) => r.outcome === "success").length).toBeGreaterThan(0);
    expect(records.filter((r) => r.outcome === "failure").length).toBeGreaterThan(0);
    const exit = await unit.daemon?.stop();
    expect(exit?.code).toBe(0);
    const journal = readJournal(unit.files.journalPath);
    const { intents } = journal;
    return {
      trace: readFileSync(out, "utf8"),
      wal: `${unit.files.journalPath}-wal`,
      intents,
      vends: journal.vends,
    };
  } finally {
    await unit.dispose();
  }
}

/** The session of an approval line's amount (`1.50`, two decimals): every vend of a run has its own price. */
function sessionOfAmount(vends: readonly VendView[]): (amount: string) => string | null {
  return (amount) => {
    const minor = Math.round(Number(amount) * 100);
    return vends.find((v) => v.price === minor)?.sessionId ?? null;
  };
}

/** V10: the start's key is in its header; capture and cancel are matched by payment id and operation. */
function v10Intents(intents: readonly IntentView[]): IntentResolver {
  return (request, line) => {
    const header = /x-service-idempotency-key: ([0-9a-fA-F-]{36})/i.exec(line)?.[1];
    const m = /^POST \/v10\/payments\/([^/]+)\/(capture|cancel)$/.exec(request);
    if (m) return intents.find((i) => i.paymentId === m[1] && i.op === m[2])?.key ?? null;
    return intents.find((i) => i.op === "start" && i.key === header)?.key ?? null;
  };
}

/** Older interface (no keys, pos-legacy §11): matched by the OrderId in the body and the operation. */
function legacyIntents(intents: readonly IntentView[]): IntentResolver {
  const ops: Record<string, string> = { Start: "start", Capture: "capture", Cancel: "cancel" };
  return (request, line) => {
    const order = /OrderId\\":\\"([^\\"]+)/.exec(line)?.[1];
    const op = ops[/Reservation(Start|Capture|Cancel)$/.exec(request)?.[1] ?? ""];
    return intents.find((i) => i.orderId === order && i.op === op)?.key ?? null;
  };
}

describe.skipIf(!HAVE_STRACE || !HAVE_SOCAT)(
  "journal fsync before every payment mutation request (strace)",
  () => {
    it("V10: intent durable before POST /v10/payments, capture and cancel", { timeout: 90_000 }, async () => {
      const { trace, wal, intents, vends } = await tracedRun({ driver: "v10", flow: "selection" }, 6, 77);
      const { mutations, walSyncs } = analyseTrace(trace, wal, v10Intents(intents));
      const kinds = new Set(
        mutations.map((m) => m.request.replace(/\/v10\/payments\/[^/]+\//, "/v10/payments/{id}/")),
      );
      expect([...kinds].sort()).toEqual([
        "POST /v10/payments",
        "POST /v10/payments/{id}/cancel",
        "POST /v10/payments/{id}/capture",
      ]);
      expect(walSyncs).toBeGreaterThan(mutations.length);
      for (const m of mutations) {
        expect(m.syncsBefore, `${m.request} sent without a WAL fsync first`).toBeGreaterThan(0);
        expect(m.key, `${m.request} matches no journal intent`).not.toBeNull();
        expect(m.keyDurableFirst, `${m.request}: intent ${m.key} not synced before the send`).toBe(true);
      }
      // Node 20's fetch/undici writes the request head (and a small body) with one writev on the socket.
      for (const m of mutations) expect(["write", "writev"]).toContain(m.syscall);
      expect(mutations.filter((m) => m.request === "POST /v10/payments").map((m) => m.syscall)).not.toContain(
        "write",
      );
      // The approval's fsync precedes the approval bytes on the serial line (the daemon's PTY).
      const approvals = analyseApprovals(trace, wal, sessionOfAmount(vends));
      expect(approvals).toHaveLength(vends.length);
      for (const a of approvals) {
        expect(a.sessionId, `${a.line} matches no journaled vend`).not.toBeNull();
        expect(a.durableFirst, `${a.line} on ${a.device} written before its approval was synced`).toBe(true);
      }
    });

    it("older interface: intent durable before ReservationStart, Capture and Cancel", {
      timeout: 90_000,
    }, async () => {
      const { trace, wal, intents } = await tracedRun({ driver: "legacy", flow: "selection" }, 4, 78);
      const { mutations } = analyseTrace(trace, wal, legacyIntents(intents));
      const kinds = new Set(mutations.map((m) => m.request.replace(/\/API\/V\d\d\//, "/API/")));
      expect(kinds.has("POST /API/ReservationStart")).toBe(true);
      expect(kinds.has("POST /API/ReservationCapture")).toBe(true);
      for (const m of mutations)
        expect(m.syncsBefore, `${m.request} sent without a WAL fsync first`).toBeGreaterThan(0);
    });
  },
);
