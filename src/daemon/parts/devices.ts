/**
 * The parts that hold what the daemon opened before the unit runs (daemon.ts): the journal, the display
 * and GPIO port, the payment driver, the VMC link, and the service state (screen, systemd STATUS and
 * watchdog). First in the unit's list, so they close last: each is closed even if another fails to, and
 * the journal closes very last (a clean checkpoint).
 */
import type { UnitStatus } from "../status.js";
import type { UnitContext } from "./context.js";
import type { Part } from "./part.js";

/** Logs a device that fails to close; the next one is closed all the same. */
const closing = (ctx: UnitContext, what: string) => (err: unknown) =>
  ctx.logger.warn({ err }, `closing the ${what} failed`);

/** A part that only closes something at the end. */
function closer(name: string, close: (ctx: UnitContext) => Promise<void> | void): Part<null> {
  let ctx: UnitContext | null = null;
  return {
    name,
    start(c) {
      ctx = c;
    },
    async stop() {
      if (ctx !== null) await close(ctx);
    },
    status: () => null,
  };
}

/** The journal (the one writer): closed last. */
export const journalPart = (): Part<null> => closer("journal", (ctx) => ctx.devices.journal.close());

/** The unit's screen, and the GPIO port unless the pulse controller owns it (it closes with the VMC). */
export const displayPart = (): Part<null> =>
  closer("display", async (ctx) => {
    await ctx.devices.display.close().catch(closing(ctx, "display"));
    if (ctx.config.vmc.driver !== "pulse") await ctx.devices.gpio?.close().catch(closing(ctx, "GPIO port"));
  });

/** The payment driver (the connection to the payment service is reached by the service part). */
export const paymentPart = (): Part<null> =>
  closer("payment", async (ctx) => {
    await ctx.devices.payment.close().catch(closing(ctx, "payment driver"));
  });

/** The VMC link (the cashless adapter's serial port, or the pulse controller). */
export const vmcLinkPart = (): Part<null> =>
  closer("vmc", async (ctx) => {
    await ctx.devices.vmc.close().catch(closing(ctx, "VMC"));
  });

/**
 * The unit's service state (ServiceState): "connecting to the payment service" from the start; at the end
 * the systemd watchdog stops. Its status is the unit's status.
 */
export function statusPart(): Part<UnitStatus | null> {
  let ctx: UnitContext | null = null;
  return {
    name: "status",
    start(c) {
      ctx = c;
      c.state.setConnect({ code: "starting", detail: "connecting to the payment service", retryAt: null });
    },
    async stop() {
      ctx?.state.close();
    },
    status: () => ctx?.state.status() ?? null,
  };
}
