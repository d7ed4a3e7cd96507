/**
 * `vendd journal held [--config FILE] [--secrets FILE] [--cancel] [--json]`: the payments the service still
 * holds for this unit's point of sale (the drivers' current-payment queries: V10's payment list by PoS, the
 * older interface's GetCurrentPayment and GetCurrentReservation), each with what the journal knows of its
 * order. After a journal was lost or replaced ("Recovering a unit"), `--cancel` releases every held payment
 * the journal does not know: cancel only, never capture (the journal that could prove a delivery is gone),
 * never a payment whose money already moved. `--cancel` takes the journal lock, so it is refused while vendd
 * runs; without it the command only reads.
 */
import { existsSync } from "node:fs";
import {
  ConfigError,
  DEFAULT_CONFIG_FILE,
  type LoadedConfig,
  loadConfig,
  secretValues,
} from "../config/load.js";
import { paymentOptions } from "../config/seams.js";
import { systemClock } from "../core/clock.js";
import { createLogger } from "../core/log.js";
import { formatAmount } from "../core/money.js";
import { acquireJournalLock, type JournalLock } from "../journal/lock.js";
import { describeRefusal } from "../journal/problems.js";
import { openJournalView } from "../journal/view.js";
import type { PaymentObservation } from "../payment/driver.js";
import { PaymentError } from "../payment/errors.js";
import { createPaymentDriver } from "../payment/factory.js";
import type { CliIo } from "./command.js";
import { formatColumns } from "./table.js";

export interface HeldOptions {
  config?: string;
  secrets?: string;
  cancel?: boolean;
  json?: boolean;
}

interface HeldLine {
  orderId: string;
  state: string;
  amount: number | null;
  /** The journal's session result for this order, "open", or null when the journal does not know it. */
  journal: string | null;
  /** What --cancel did: cancelled, skipped (why), failed (why); null without --cancel. */
  action: string | null;
}

/** States in which a payment holds no money yet or holds it reserved: the ones a cancel releases. */
const RELEASABLE: ReadonlySet<string> = new Set(["pending", "issued", "reserved"]);

export async function heldCommand(opts: HeldOptions, out: CliIo): Promise<number> {
  const file = opts.config ?? DEFAULT_CONFIG_FILE;
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(file, {
      env: out.env,
      ...(opts.secrets === undefined ? {} : { secretsFile: opts.secrets }),
    });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    out.stderr.write(`vendd journal held: invalid configuration ${file}:\n${err.message}\n`);
    return 1;
  }
  const path = loaded.config.journal.path;
  let lock: JournalLock | null = null;
  try {
    if (opts.cancel) lock = acquireJournalLock(path);
    const lines = await listHeld(loaded, path, opts.cancel === true);
    out.stdout.write(render(lines, opts.json === true, path));
    return lines.some((l) => l.action?.startsWith("failed")) ? 1 : 0;
  } catch (err) {
    const refusal = describeRefusal(err);
    if (refusal !== null) {
      out.stderr.write(`vendd journal held: ${refusal}`);
      return 1;
    }
    if (err instanceof PaymentError) {
      out.stderr.write(
        `vendd journal held: the payment service did not answer (${err.code}: ${err.message})\n`,
      );
      return 1;
    }
    throw err;
  } finally {
    lock?.release();
  }
}

async function listHeld(loaded: LoadedConfig, path: string, cancel: boolean): Promise<HeldLine[]> {
  const { config, secrets } = loaded;
  const logger = createLogger({ level: "warn", secrets: secretValues(secrets) });
  // The driver never settles anything on its own here: every order counts as the journal's.
  const payment = await createPaymentDriver(paymentOptions(config, secrets), {
    clock: systemClock,
    logger,
    ownsOrder: () => true,
  });
  try {
    const signal = AbortSignal.timeout(30_000);
    await payment.open(signal);
    const held = await payment.findActive(signal);
    // Read after the service: a payment is journaled before it is started, so a live daemon's own payment
    // is never mistaken for an unknown one.
    const known = journalOrders(path);
    const lines: HeldLine[] = [];
    for (const obs of held) {
      const journal = known.get(obs.ref.orderId) ?? null;
      lines.push({
        orderId: obs.ref.orderId,
        state: obs.state,
        amount: obs.amount,
        journal,
        action: cancel ? await release(payment.cancel.bind(payment), obs, journal, signal) : null,
      });
    }
    return lines;
  } finally {
    await payment.close();
  }
}

async function release(
  cancel: (ref: PaymentObservation["ref"], signal?: AbortSignal) => Promise<void>,
  obs: PaymentObservation,
  journal: string | null,
  signal: AbortSignal,
): Promise<string> {
  if (journal !== null) return "skipped: the journal knows it (vendd settles it)";
  if (!RELEASABLE.has(obs.state))
    return `skipped: ${obs.state} (money moved: refund by hand if nothing was delivered)`;
  try {
    await cancel(obs.ref, signal);
    return "cancelled";
  } catch (err) {
    return `failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Order id → "open" or the session's result; empty when there is no journal (yet, or moved aside). */
function journalOrders(path: string): Map<string, string> {
  const known = new Map<string, string>();
  if (!existsSync(path)) return known;
  const view = openJournalView(path);
  try {
    for (const s of view.recent(1_000_000)) known.set(s.orderId, s.result);
  } finally {
    view.close();
  }
  return known;
}

function render(lines: HeldLine[], json: boolean, path: string): string {
  if (json) return `${JSON.stringify({ journal: path, held: lines })}\n`;
  if (lines.length === 0) return "the service holds no payment for this unit\n";
  const rows = lines.map((l) => [
    l.orderId,
    l.state,
    l.amount === null ? "-" : formatAmount(l.amount),
    l.journal ?? "not in journal",
    l.action ?? "",
  ]);
  const headers = [
    "ORDER",
    "STATE",
    "AMOUNT",
    "JOURNAL",
    lines.some((l) => l.action !== null) ? "ACTION" : "",
  ];
  return formatColumns(headers, rows, { flex: 4, right: [2] });
}
