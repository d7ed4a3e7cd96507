/**
 * The invoice callbacks' outbox (seed 002 §Invoice callback): status changes wait here for the callback job,
 * which posts up to 1000 due elements per merchant in one array and retries a failed POST 8 times, each
 * after twice the delay of the one before.
 */
import type { EmuClock } from "../types.js";
import type { HttpsCallbackClient } from "./https.js";
import type { CallbackElement, DeliveredCallback, InvoiceMerchant } from "./model.js";

/** The callback job period (seed: "a job that starts every 5 seconds"), emulator ms. */
export const CALLBACK_JOB_MS = 5000;
const CALLBACK_RETRIES = 8;
const CALLBACK_BATCH = 1000;

interface QueuedCallback {
  merchantId: string;
  element: CallbackElement;
  /** Failed deliveries so far. */
  failures: number;
  /** Emulator ms before which it is not (re)sent. */
  notBefore: number;
}

export class CallbackOutbox {
  private queue: QueuedCallback[] = [];
  readonly delivered: DeliveredCallback[] = [];
  readonly failed: DeliveredCallback[] = [];

  constructor(
    private readonly d: { clock: EmuClock; https: HttpsCallbackClient },
    private readonly merchants: ReadonlyMap<string, InvoiceMerchant>,
  ) {}

  /** Queues an element for the next job. */
  add(merchantId: string, element: CallbackElement): void {
    this.queue.push({ merchantId, element, failures: 0, notBefore: 0 });
  }

  /** One run of the job: one POST per merchant with up to 1000 due elements. */
  async deliver(now: number): Promise<void> {
    const byMerchant = new Map<string, QueuedCallback[]>();
    for (const q of this.queue) {
      const m = this.merchants.get(q.merchantId);
      if (q.notBefore > now || m?.callback == null) continue;
      const list = byMerchant.get(q.merchantId) ?? [];
      if (list.length < CALLBACK_BATCH) list.push(q);
      byMerchant.set(q.merchantId, list);
    }
    await Promise.all(
      [...byMerchant].map(async ([merchantId, items]) => {
        const m = this.merchants.get(merchantId);
        if (m?.callback == null) return;
        const { url, authorization } = m.callback;
        const elements = items.map((q) => q.element);
        const status = await this.d.https.post(url, elements, { authorization });
        const record = { merchantId, url, at: this.d.clock.now(), elements };
        if (status !== null && status >= 200 && status < 300) {
          this.delivered.push(record);
          this.queue = this.queue.filter((q) => !items.includes(q));
          return;
        }
        for (const q of items) {
          q.failures += 1;
          q.notBefore = now + CALLBACK_JOB_MS * 2 ** (q.failures - 1);
        }
        const dropped = items.filter((q) => q.failures > CALLBACK_RETRIES);
        if (dropped.length > 0) {
          this.failed.push({ ...record, elements: dropped.map((q) => q.element) });
          this.queue = this.queue.filter((q) => !dropped.includes(q));
        }
      }),
    );
  }

  /** Callbacks waiting for the job (not yet delivered, or waiting for a retry). */
  pending(): { merchantId: string; element: CallbackElement; failures: number; notBefore: number }[] {
    return this.queue.map((q) => ({ ...q }));
  }
}
