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
}

function canSelect(vmc: VendController): vmc is VendController & SimSelection {
  return "requestVend" in vmc && typeof vmc.requestVend === "function";
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
  const finished = new Promise<FinishedSession | null>((resolve) => {
    const off = e.onSessionFinished((s) => {
      off();
      clearTimeout(timer);
      resolve(s);
    });
    const timer = setTimeout(() => {
      off();
      resolve(null);
    }, timeoutMs);
  });
  if (canSelect(u.vmc)) {
    if (!u.vmc.requestVend(item, amount))
      throw new CommandError("busy", "the simulated machine did not take the selection");
    session.push(
      "progress",
      `test vend of ${formatAmount(amount)}: QR shown on the unit, waiting for payment`,
    );
  } else {
    session.push(
      "progress",
      `select item ${item} at ${formatAmount(amount)} in the machine's test vend menu; waiting for it`,
    );
  }
  const s = await finished;
  if (s === null) throw new CommandError("failed", "no vend finished in time");
  return { orderId: s.orderId, result: s.result, amount: formatAmount(s.price), reason: s.reason };
}
