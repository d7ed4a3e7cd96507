import type { Clock } from "../../src/core/clock.js";
import type { Minor } from "../../src/core/money.js";
import { type VendController, VmcError, type VmcEvent } from "./controller.js";

export type DispenseOutcome = "success" | "failure" | "none";

export interface SimVmcOptions {
  clock: Clock;
  /** Time the simulated machine takes to dispense after an approval, ms (default 300). */
  dispenseMs?: number;
  /** What the machine does with an approved vend (default: success). `none` waits for a script call. */
  outcome?: (vend: { item: number; price: Minor }) => DispenseOutcome;
}

/** `session`: funds offered by the reader (authorization first); vends inside it return to it. */
type SimState =
  | { tag: "disabled" }
  | { tag: "enabled" }
  | { tag: "requested"; item: number; price: Minor; session: boolean }
  | { tag: "vending"; item: number; price: Minor; session: boolean }
  | { tag: "session"; funds: Minor };

export interface SimVend {
  item: number;
  price: Minor;
  result: "delivered" | "failed" | "denied" | "cancelled" | "reset";
}

/**
 * An in-process vending machine: the `sim` VendController. It enforces the same rules as the adapter
 * driver (an approval must match the pending request exactly) and records every vend, so tests and the demo
 * can compare what the machine delivered with what the journal captured.
 */
export class SimVmc implements VendController {
  readonly kind = "sim" as const;
  private state: SimState = { tag: "disabled" };
  private funds: Minor = 0;
  private readonly listeners = new Set<(e: VmcEvent) => void>();
  /** Every vend request and how it ended. */
  readonly vends: SimVend[] = [];
  /** Texts the engine asked the machine to display. */
  readonly texts: string[] = [];

  constructor(private readonly opts: SimVmcOptions) {}

  get status(): SimState["tag"] {
    return this.state.tag;
  }

  async open(): Promise<void> {
    this.state = { tag: "enabled" };
  }

  async setEnabled(enabled: boolean): Promise<void> {
    this.state = enabled ? { tag: "enabled" } : { tag: "disabled" };
  }

  async beginSession(funds: Minor): Promise<void> {
    if (this.state.tag !== "enabled")
      throw new VmcError("state", `cannot begin a session while ${this.state.tag}`);
    this.state = { tag: "session", funds };
    this.funds = funds;
    this.emit({ type: "sessionStarted", funds });
  }

  async approveVend(amount: Minor): Promise<void> {
    const s = this.state;
    if (s.tag !== "requested") throw new VmcError("state", `no vend request pending (${s.tag})`);
    if (s.price !== amount)
      throw new VmcError("amount", `approval ${amount} differs from the request ${s.price}`);
    this.state = { tag: "vending", item: s.item, price: s.price, session: s.session };
    const outcome = this.opts.outcome?.({ item: s.item, price: s.price }) ?? "success";
    if (outcome === "none") return;
    this.opts.clock.setTimer(this.opts.dispenseMs ?? 300, () => {
      if (outcome === "success") this.dispenseSuccess();
      else this.dispenseFailure();
    });
  }

  async denyVend(): Promise<void> {
    const s = this.state;
    if (s.tag !== "requested") return;
    this.vends.push({ item: s.item, price: s.price, result: "denied" });
    this.state = this.after(s);
  }

  async endSession(): Promise<void> {
    const s = this.state;
    if (s.tag === "session" || ((s.tag === "requested" || s.tag === "vending") && s.session)) {
      if (s.tag !== "session") this.vends.push({ item: s.item, price: s.price, result: "cancelled" });
      this.state = { tag: "enabled" };
      this.emit({ type: "sessionEnded" });
    }
  }

  async displayText(text: string): Promise<void> {
    this.texts.push(text.slice(0, 32));
  }

  onEvent(listener: (event: VmcEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.state = { tag: "disabled" };
  }

  // ---- the machine's side (the customer and the mechanics), for the demo and tests ----

  /** Funds offered in the current session, or null outside one. */
  get sessionFunds(): Minor | null {
    return this.state.tag === "session" ? this.state.funds : null;
  }

  /**
   * The customer chooses `item` at `price` (selection first, or inside a session). Returns false when the
   * machine is not ready for it.
   */
  requestVend(item: number, price: Minor): boolean {
    const s = this.state;
    if (s.tag !== "enabled" && s.tag !== "session") return false;
    this.state = { tag: "requested", item, price, session: s.tag === "session" };
    this.emit({ type: "vendRequested", item, price });
    return true;
  }

  /** The customer is done (SESSION COMPLETE, or the return button in a session). */
  finishSession(): void {
    if (this.state.tag !== "session") return;
    this.state = { tag: "enabled" };
    this.emit({ type: "sessionEnded" });
  }

  dispenseSuccess(): void {
    const s = this.state;
    if (s.tag !== "vending") return;
    this.vends.push({ item: s.item, price: s.price, result: "delivered" });
    this.state = this.after(s);
    this.emit({ type: "vendSucceeded", item: s.item });
  }

  dispenseFailure(): void {
    const s = this.state;
    if (s.tag !== "vending") return;
    this.vends.push({ item: s.item, price: s.price, result: "failed" });
    this.state = this.after(s);
    this.emit({ type: "vendFailed" });
  }

  /** Return button / VMC timeout before the approval. */
  customerCancel(): void {
    const s = this.state;
    if (s.tag !== "requested") return;
    this.vends.push({ item: s.item, price: s.price, result: "cancelled" });
    this.state = this.after(s);
    this.emit({ type: "vendCancelled" });
  }

  /** The VMC resets; a vend in progress has an unknown outcome. */
  reset(reason = "vmc reset"): void {
    const s = this.state;
    if (s.tag === "requested" || s.tag === "vending")
      this.vends.push({ item: s.item, price: s.price, result: "reset" });
    this.state = { tag: "enabled" };
    this.emit({ type: "reset", reason });
  }

  /** Where a vend leaves the machine: back in the session it belonged to, or enabled. */
  private after(s: { session: boolean }): SimState {
    return s.session ? { tag: "session", funds: this.funds } : { tag: "enabled" };
  }

  private emit(e: VmcEvent): void {
    // Devices report asynchronously; never call back into the engine from inside its own command.
    queueMicrotask(() => {
      for (const l of this.listeners) l(e);
    });
  }
}
