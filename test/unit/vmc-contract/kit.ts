import { expect, it } from "vitest";
import { VmcError, type VmcEvent } from "../../../drivers/vmc/controller.js";
import type { Minor } from "../../../src/core/money.js";
import { type Capabilities, type Capability, Events, type Subject } from "./subject.js";

/** Funds every session case offers: above any price the cases use (pulse: 15.00). */
export const FUNDS: Minor = 5000;
/** The VMC ends the session after the vend (single vend; always so for a selection-first vend). */
export const END = { endSession: true } as const;
export const KEEP = { endSession: false } as const;

export type VendRequest = { item: number; price: Minor };

/** What a case works with: the subject of this case, its events, and assertions written once. */
export class CaseKit {
  private current: { s: Subject; ev: Events } | null = null;

  constructor(readonly caps: Capabilities) {}

  start(s: Subject): void {
    const ev = new Events();
    s.ctrl.onEvent(ev.push);
    this.current = { s, ev };
  }

  stop(): Subject | null {
    const s = this.current?.s ?? null;
    this.current = null;
    return s;
  }

  get s(): Subject {
    if (!this.current) throw new Error("no subject: the case runs outside beforeEach/afterEach");
    return this.current.s;
  }

  get ev(): Events {
    if (!this.current) throw new Error("no subject: the case runs outside beforeEach/afterEach");
    return this.current.ev;
  }

  /** The events a selection-first vend ends with: the implicit session's end where the subject has one. */
  get implicitEnd(): VmcEvent[] {
    return this.caps.implicitSession === true ? [{ type: "sessionEnded" }] : [];
  }

  /** Waits until `n` events of `type` have arrived in this case, counted from its start (default 1). */
  async untilCount(type: VmcEvent["type"], n = 1): Promise<void> {
    await this.s.until(() => this.ev.count(type) >= n, `${n} ${type} event(s); got ${this.ev.types()}`);
  }

  /**
   * The machine requests a vend; resolves with the request the controller reported. With item selection the
   * report must be exactly the chosen item and price; without, the subject's fixed request.
   */
  async request(item = 2, price: Minor = 150): Promise<VendRequest> {
    const before = this.ev.count("vendRequested");
    expect(await this.s.machine.requestVend(item, price)).toBe(true);
    await this.untilCount("vendRequested", before + 1);
    const got = this.ev.all.filter((e) => e.type === "vendRequested").at(-1);
    if (got?.type !== "vendRequested") throw new Error("vendRequested vanished");
    const expected =
      this.caps.selection === true
        ? { item, price }
        : (this.s.fixedRequest ?? { item: got.item, price: got.price });
    expect(got).toEqual({ type: "vendRequested", ...expected });
    return { item: got.item, price: got.price };
  }

  /**
   * Approves `price` and waits until the machine has the approval where it can tell: the driver takes the
   * next poll after the write as confirmation, and on a real wire that poll may overtake the command.
   */
  async approve(price: Minor): Promise<void> {
    const before = this.s.machine.approvals()?.length ?? 0;
    await this.s.ctrl.approveVend(price);
    await this.s.until(
      () => (this.s.machine.approvals()?.length ?? before + 1) > before,
      "the machine has the approval",
    );
  }

  /** The approvals the machine received, where it can tell. */
  expectApprovals(amounts: Minor[]): void {
    const seen = this.s.machine.approvals();
    if (seen !== null) expect(seen).toEqual(amounts);
  }
}

/** Asserts that `p` rejects with a `VmcError`, with `code` when given. */
export async function refused(p: Promise<unknown>, code?: VmcError["code"]): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "the command should have been refused").toBeInstanceOf(VmcError);
  if (code !== undefined) expect(err).toMatchObject({ code });
}

/**
 * Declares a case that needs `needs`: it runs when the subject has them all, and is skipped otherwise with
 * the reasons in its name, so the report shows what each subject cannot express and why.
 */
export function caseIf(
  caps: Capabilities,
  needs: Capability[],
  title: string,
  fn: () => Promise<void>,
): void {
  const missing = needs.map((c) => caps[c]).filter((r): r is string => r !== true);
  if (missing.length === 0) it(title, fn);
  else it.skip(`${title} [not expressible: ${missing.join("; ")}]`, fn);
}
