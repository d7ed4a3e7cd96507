import type { Minor } from "../../src/core/money.js";

/**
 * The vending machine controller (VMC) as the engine sees it: vendd is the cashless device. Implementations:
 * `sim.ts` (in-process), the MDB cashless adapter line protocol over a serial port, and pulse output.
 *
 * Failure semantics (test/unit/vmc-contract runs every implementation against them):
 * - Commands reject with a `VmcError` when the adapter does not confirm within its timeout (`timeout`),
 *   the current state does not allow the command (`state`), an amount is not integer minor units or not
 *   the requested one (`amount`), the link is down (`io`), or the controller is closed (`closed`); a
 *   rejected command changed nothing that vendd relies on. Commands before `open` reject too.
 * - `open` and `close` are idempotent. Events arrive only after `open` is called and never after `close`
 *   has resolved; after `close`, `open` and every command reject with `closed`.
 * - `approveVend(amount)` is refused unless a vend request for exactly that amount is pending: the
 *   controller never approves an amount different from the one requested (vending-mdb §1.5 rule 5).
 *   `denyVend` needs a pending request, `endSession` an idle session vendd began (no request pending).
 * - `setEnabled(false)` is refused during an approved vend; with a request pending it is refused or it
 *   withdraws the request (`vendCancelled`).
 * - Events arrive in protocol order. No correlation id exists on the wire, so a `vendSucceeded` or
 *   `vendFailed` always refers to the one approved vend; lines that do not fit the state are dropped
 *   (logged) and never become events. On MDB a selection-first vend runs in the VMC's implicit session:
 *   its outcome (or deny, or withdrawal) is followed by `sessionEnded`; a session vendd began goes on
 *   until the VMC completes it or `endSession`.
 * - After a `reset` event any approved vend without an outcome has an unknown outcome; the engine applies
 *   its policy (MDB §7.4.7: counts as success). A link lost during a session is reported as `reset`.
 */
export interface VendController {
  readonly kind: VmcKind;

  /** Opens the link, configures the reader and enables it. */
  open(): Promise<void>;

  /** Takes the reader off the bus (out of service) or back on. */
  setEnabled(enabled: boolean): Promise<void>;

  /** Authorization first: offers `funds` to the VMC (BEGIN SESSION). */
  beginSession(funds: Minor): Promise<void>;

  /** Approves the pending vend request; `amount` must equal the requested price. */
  approveVend(amount: Minor): Promise<void>;

  /** Denies the pending vend request. */
  denyVend(): Promise<void>;

  /** Ends a session vendd began that has no vend request pending. */
  endSession(): Promise<void>;

  /** Shows text on the VMC's display when it allows it (≤ 32 characters). Best effort. */
  displayText(text: string): Promise<void>;

  /** Subscribes to events; returns the unsubscribe function. */
  onEvent(listener: (event: VmcEvent) => void): () => void;

  close(): Promise<void>;
}

export type VmcKind = "sim" | "mdb-adapter" | "pulse";

/**
 * The text a VMC can show: MDB DISPLAY REQUEST carries at most 32 ASCII characters (vending-mdb §1.3).
 * Anything else is replaced by `?`, not refused (display is best effort).
 */
export function displayable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, 32);
}

export type VmcEvent =
  /** The customer chose `item` at `price` (selection first, or inside a session). */
  | { type: "vendRequested"; item: number; price: Minor }
  /** The VMC delivered the approved vend. */
  | { type: "vendSucceeded"; item: number | null }
  /** The VMC did not deliver the approved vend (refund the customer). */
  | { type: "vendFailed" }
  /** The VMC withdrew a vend request before it was approved or denied (timeout, return button). */
  | { type: "vendCancelled" }
  /** The VMC accepted a session vendd began (funds shown). */
  | { type: "sessionStarted"; funds: Minor }
  /** The VMC ended the session (session complete, return button). */
  | { type: "sessionEnded" }
  /** The adapter or VMC reset; any approved vend without an outcome is now unknown. */
  | { type: "reset"; reason: string }
  /** The link to the VMC is healthy (`up`) or silent (`down`). */
  | { type: "link"; up: boolean };

export class VmcError extends Error {
  override readonly name = "VmcError";
  constructor(
    readonly code: "timeout" | "state" | "amount" | "io" | "closed",
    message: string,
  ) {
    super(message);
  }
}
