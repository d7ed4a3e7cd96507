/**
 * The console's `test-vend`: one real vend of the test amount through the unit's whole path, answered
 * when the session finishes (or refused when the unit is not in service and idle).
 */
import type { VendController } from "../../drivers/vmc/controller.js";
import { formatAmount, parseAmount } from "../core/money.js";
import { printable } from "../core/printable.js";
import type { FinishedSession } from "../engine/options.js";
import { type ConsoleUnit, str } from "./consoleUnit.js";
import { CommandError, type ControlSession } from "./control.js";

interface SimSelection {
  requestVend(item: number, price: number): boolean;
  customerCancel(): void;
}

/** Where a running test vend keeps its cancel (the session's scratch space). */
const CANCEL = "test-vend.cancel";
/** How long a cancelled test vend waits for the payment's cancel at the service before answering, ms. */
const CANCEL_WAIT_MS = 10_000;

/** The `cancel` command: cancels the connection's running test vend, if any. */
export function cancelRunning(session: ControlSession): { cancelled: boolean; detail: string } {
  const cancel = session.data.get(CANCEL);
  if (typeof cancel !== "function") return { cancelled: false, detail: "no test vend is running" };
  return (cancel as () => { cancelled: boolean; detail: string })();
}

function canSelect(vmc: VendController): vmc is VendController & SimSelection {
  return (
    "requestVend" in vmc &&
    typeof vmc.requestVend === "function" &&
    "customerCancel" in vmc &&
    typeof vmc.customerCancel === "function"
  );
}

/**
 * A real vend of the test amount through the whole path: the VMC requests it (the simulated machine's
 * selection), the unit shows the QR and waits for the payment, approves the vend, settles and records it.
 * On a real machine the selection is the technician's, at the machine: this waits for it.
 */
export async function testVend(
  u: ConsoleUnit,
  a: Record<string, unknown>,
  session: ControlSession,
): Promise<unknown> {
  const e = u.engine();
  if (e === null || !u.status().inService || e.current.tag !== "idle")
    throw new CommandError("busy", "the unit must be in service and idle for a test vend");
  if (u.config.engine.flow !== "selection")
    throw new CommandError("refused", "test-vend runs in the selection flow (engine.flow: selection)");
  const text = str(a, "amount") ?? u.config.console.testVendAmount;
  let amount: number;
  try {
    amount = parseAmount(text, 2);
  } catch {
    throw new CommandError("badArgs", `not an amount: ${printable(text, 20)}`);
  }
  if (amount <= 0 || amount > u.config.engine.maxPriceMinor)
    throw new CommandError("badArgs", `the amount must be above 0 and at most ${u.config.engine.maxPrice}`);
  const item = u.config.console.testVendItem;
  const timeoutMs = u.config.engine.paymentTimeoutMs + u.config.engine.vendTimeoutMs + 30_000;
  let settle: (s: FinishedSession | null) => void = () => {};
  const finished = new Promise<FinishedSession | null>((resolve) => {
    const off = e.onSessionFinished((s) => settle(s));
    const timer = setTimeout(() => settle(null), timeoutMs);
    let done = false;
    settle = (s) => {
      if (done) return;
      done = true;
      off();
      clearTimeout(timer);
      resolve(s);
    };
  });
  const sim = canSelect(u.vmc) ? u.vmc : null;
  if (sim !== null) {
    if (!sim.requestVend(item, amount))
      throw new CommandError("busy", "the simulated machine did not take the selection");
    session.push(
      "progress",
      `test vend of ${formatAmount(amount)}: QR shown on the unit, waiting for payment (Ctrl-C cancels)`,
    );
  } else {
    session.push(
      "progress",
      `select item ${item} at ${formatAmount(amount)} in the machine's test vend menu; waiting for it`,
    );
  }
  let cancelled = false;
  session.data.set(CANCEL, () => {
    if (cancelled) return { cancelled: true, detail: "already cancelling" };
    if (e.current.tag !== "paying")
      return { cancelled: false, detail: "too late: the vend is approved or settling" };
    cancelled = true;
    if (sim !== null) sim.customerCancel();
    else {
      // A real machine's selection is cancelled at the machine (its return button): stop waiting here.
      setTimeout(() => settle(null), 0);
      return { cancelled: true, detail: "press the machine's return button to cancel the selection" };
    }
    // The payment is cancelled at the service; answer with that outcome, or soon without it.
    setTimeout(() => settle(null), CANCEL_WAIT_MS).unref?.();
    return { cancelled: true, detail: "the payment is being cancelled at the service" };
  });
  let s: FinishedSession | null;
  try {
    s = await finished;
  } finally {
    session.data.delete(CANCEL);
  }
  if (s === null) {
    if (cancelled)
      return {
        orderId: "-",
        result: "cancelled",
        amount: formatAmount(amount),
        reason: "cancelled from the console",
      };
    throw new CommandError("failed", "no vend finished in time");
  }
  return { orderId: s.orderId, result: s.result, amount: formatAmount(s.price), reason: s.reason };
}
