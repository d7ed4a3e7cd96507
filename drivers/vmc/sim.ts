import type { Clock } from "../../src/core/clock.js";
import type { Minor } from "../../src/core/money.js";
import { displayable, type VendController, VmcError, type VmcEvent } from "./controller.js";

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
 * can compare what the machine delivered with what the journal captured. It behaves as an MDB VMC in
 * "always idle" mode behind the adapter (test/unit/vmc-contract checks it against the PTY simulator): a
 * selection-first vend runs in the VMC's implicit session, which the VMC ends after the vend's outcome
 * (`sessionEnded`, vending-mdb §2.4); a session vendd began goes on until SESSION COMPLETE or `endSession`.
 */
export class SimVmc implements VendController {
  readonly kind = "sim" as const;
  private state: SimState = { tag: "disabled" };
  private phase: "new" | "open" | "closed" = "new";
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

  /** Idempotent: a second open leaves a pending request alone and only enables a disabled machine. */
  async open(): Promise<void> {
    this.usable("open");
    this.phase = "open";
    if (this.state.tag === "disabled") this.state = { tag: "enabled" };
  }

  /** Like the adapter, the reader goes off the bus only between sessions (never with a vend pending). */
  async setEnabled(enabled: boolean): Promise<void> {
    this.usable("setEnabled");
    if (this.phase !== "open") throw new VmcError("state", "the machine is not open");
    const s = this.state;
    if (enabled) {
      if (s.tag === "disabled") this.state = { tag: "enabled" };
      return;
    }
    if (s.tag !== "enabled" && s.tag !== "disabled")
      throw new VmcError("state", `cannot disable while ${s.tag}`);
    this.state = { tag: "disabled" };
  }

  async beginSession(funds: Minor): Promise<void> {
    this.usable("beginSession");
    if (!Number.isSafeInteger(funds) || funds < 0) throw new VmcError("amount", `invalid funds ${funds}`);
    if (this.state.tag !== "enabled")
      throw new VmcError("state", `cannot begin a session while ${this.state.tag}`);
    this.state = { tag: "session", funds };
    this.funds = funds;
    this.emit({ type: "sessionStarted", funds });
  }

  async approveVend(amount: Minor): Promise<void> {
    this.usable("approveVend");
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
    this.usable("denyVend");
    const s = this.state;
    if (s.tag !== "requested") throw new VmcError("state", `no vend request pending (${s.tag})`);
    this.vends.push({ item: s.item, price: s.price, result: "denied" });
    this.afterVend(s);
  }

  /** Ends a session vendd began that has no vend request pending (like `C,STOP`, vending-mdb §2.2). */
  async endSession(): Promise<void> {
    this.usable("endSession");
    if (this.state.tag !== "session") throw new VmcError("state", `no idle session (${this.state.tag})`);
    this.state = { tag: "enabled" };
    this.emit({ type: "sessionEnded" });
  }

  async displayText(text: string): Promise<void> {
    this.usable("displayText");
    this.texts.push(displayable(text));
  }

  onEvent(listener: (event: VmcEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.phase = "closed";
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
    this.emit({ type: "vendSucceeded", item: s.item });
    this.afterVend(s);
  }

  dispenseFailure(): void {
    const s = this.state;
    if (s.tag !== "vending") return;
    this.vends.push({ item: s.item, price: s.price, result: "failed" });
    this.emit({ type: "vendFailed" });
    this.afterVend(s);
  }

  /** Return button / VMC timeout before the approval. */
  customerCancel(): void {
    const s = this.state;
    if (s.tag !== "requested") return;
    this.vends.push({ item: s.item, price: s.price, result: "cancelled" });
    this.emit({ type: "vendCancelled" });
    this.afterVend(s);
  }

  /** The VMC resets; a vend in progress has an unknown outcome. */
  reset(reason = "vmc reset"): void {
    const s = this.state;
    if (s.tag === "requested" || s.tag === "vending")
      this.vends.push({ item: s.item, price: s.price, result: "reset" });
    this.state = { tag: "enabled" };
    this.emit({ type: "reset", reason });
  }

  /**
   * Where a vend leaves the machine: back in the session vendd began, or enabled once the VMC has ended the
   * implicit session of a selection-first vend (SESSION COMPLETE: `c,STATUS,ENABLED`, vending-mdb §2.4).
   */
  private afterVend(s: { session: boolean }): void {
    if (s.session) {
      this.state = { tag: "session", funds: this.funds };
      return;
    }
    this.state = { tag: "enabled" };
    this.emit({ type: "sessionEnded" });
  }

  /** Every command and `open` refuse once the machine is closed. */
  private usable(what: string): void {
    if (this.phase === "closed") throw new VmcError("closed", `${what}: the machine is closed`);
  }

  private emit(e: VmcEvent): void {
    // Devices report asynchronously; never call back into the engine from inside its own command.
    queueMicrotask(() => {
      for (const l of this.listeners) l(e);
    });
  }
}
