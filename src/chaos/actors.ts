import type { VmcSimulator } from "../../drivers/vmc/simulator/index.js";
import type { Emulator } from "../emulator/index.js";

/** What the simulated VMC did with one vend request (the parent's own record, checked against the journal). */
export interface VendRecord {
  /** The VMC's ordinal of the vend request (`Approval.request`); absent when no request was made. */
  request?: number;
  item: number;
  price: number;
  /**
   * `success`/`failure`: approved and reported so by the VMC; `undispensed`: approved, but the unit reset the
   * reader before the VMC could report (MDB §7.4.7: counts as delivered); `denied`: never approved;
   * `skipped`: the request could not be made (reader not ready).
   */
  outcome: "success" | "failure" | "undispensed" | "denied" | "skipped";
}

/** What the actors need: the emulator (customers' app), the VMC simulator, the beacon and a few knobs. */
export interface ActorContext {
  emu: Emulator;
  sim: VmcSimulator;
  beaconId: string;
  phone: string;
  /** How long a payment may take before the customer gives up, ms. */
  payWithinMs: number;
  /** How long the VMC waits for a vend's approval or denial, ms. */
  decideWithinMs: number;
  random: () => number;
  signal?: AbortSignal;
}

/** Step of every wait loop, ms. */
const STEP_MS = 20;

export function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `cond` every 20 ms until true or `timeoutMs` passed; returns whether it became true. */
export async function waitUntil(
  cond: () => boolean,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline || signal?.aborted) return false;
    await pause(STEP_MS);
  }
  return true;
}

/**
 * The customer in front of the unit: checks in on the beacon and accepts in the app, retrying while the
 * payment does not exist yet (seed: the payment must exist before it can be accepted), until `done()` or the
 * time runs out. Returns true once an accept was taken (200).
 */
export async function customerPays(ctx: ActorContext, done: () => boolean): Promise<boolean> {
  const app = ctx.emu.userSimulation;
  const deadline = Date.now() + ctx.payWithinMs;
  for (let i = 0; Date.now() < deadline && !done() && !ctx.signal?.aborted; i++) {
    if (i % 10 === 0) app.checkin(ctx.beaconId, ctx.phone);
    if (app.accept(ctx.beaconId, ctx.phone).status === 200) return true;
    await pause(STEP_MS);
  }
  return false;
}

/**
 * Waits for the unit's answer to the vend request the VMC just made (`sim.requests`), then dispenses (success with
 * probability `successRate`). `endSession: false` keeps a check-in session open (multi-vend).
 */
async function answerVend(
  ctx: ActorContext,
  item: number,
  price: number,
  successRate: number,
  endSession: boolean,
): Promise<VendRecord> {
  const { sim } = ctx;
  const request = sim.requests;
  if (!(await waitUntil(() => sim.reader !== "vend", ctx.decideWithinMs, ctx.signal))) {
    // A real VMC gives up on an unanswered vend request: VEND CANCEL (vending-mdb §1.4).
    if (sim.reader === "vend") sim.customerCancel();
  }
  // The approval of this very request (by the VMC's request ordinal, not by item and price).
  const approved = sim.approvals.some((a) => a.request === request);
  if (!approved) return { request, item, price, outcome: "denied" };
  // A short, seeded hesitation before the product drops: it gives random kills a window in "vending".
  await pause(Math.floor(ctx.random() * 60));
  if (sim.reader !== "approved") return { request, item, price, outcome: "undispensed" };
  const ok = ctx.random() < successRate;
  if (ok) sim.dispenseSuccess({ endSession });
  else sim.dispenseFailure({ endSession });
  return { request, item, price, outcome: ok ? "success" : "failure" };
}

/** Selection first: the VMC requests one vend, the customer pays, the VMC dispenses. */
export async function selectionVend(
  ctx: ActorContext,
  item: number,
  price: number,
  successRate: number,
): Promise<VendRecord> {
  const { sim } = ctx;
  if (!(await waitUntil(() => sim.reader === "enabled", 5000, ctx.signal)))
    return { item, price, outcome: "skipped" };
  sim.vend(item, price);
  const paying = customerPays(ctx, () => sim.reader !== "vend");
  const record = await answerVend(ctx, item, price, successRate, true);
  await paying;
  return record;
}

/**
 * Check-in first: the customer checks in and accepts; once the unit begins the session (funds on the
 * VMC), the VMC requests the planned vends within the funds, then completes the session.
 */
export async function checkinSession(
  ctx: ActorContext,
  plan: readonly { item: number; price: number }[],
  successRate: number,
): Promise<VendRecord[]> {
  const { sim } = ctx;
  const records: VendRecord[] = [];
  const skipAll = () => plan.map((p) => ({ ...p, outcome: "skipped" as const }));
  if (!(await waitUntil(() => sim.reader === "enabled", 5000, ctx.signal))) return skipAll();
  await customerPays(ctx, () => sim.reader === "idle");
  if (!(await waitUntil(() => sim.reader === "idle", ctx.decideWithinMs, ctx.signal))) return skipAll();
  for (const p of plan) {
    if (sim.reader !== "idle") {
      records.push({ ...p, outcome: "skipped" });
      continue;
    }
    sim.vend(p.item, p.price);
    const r = await answerVend(ctx, p.item, p.price, successRate, false);
    records.push(r);
    if (r.outcome === "success" || r.outcome === "failure")
      await waitUntil(() => sim.reader !== "approved", 1000, ctx.signal);
  }
  if (sim.reader === "idle") sim.completeSession();
  return records;
}
