/**
 * The service part: the unit's way into service, in the background. Members only first when it applies
 * (issue 31), then reach the payment service and settle what the journal left (../connect.ts), start the
 * engine, and tell the parts that follow it (peripherals once it runs; DEX reads and housekeeping once in
 * service). READY is sent at the latest after the grace period. Stopping it tells systemd, aborts every wait
 * and waits for the way in and the journal re-check to end; the parts started before it stop after.
 */
import type { Timer } from "../../core/clock.js";
import type { VendEngine } from "../../engine/runner.js";
import { connectService } from "../connect.js";
import type { UnitContext } from "./context.js";
import type { EnginePart } from "./engine.js";
import type { MembersPart } from "./members.js";
import type { Part } from "./part.js";

/**
 * Members only (issue 31): with a valid entitlement list (selection first), the VMC is enabled and the
 * reader started before the payment service answers, so members vend through an outage, also after a
 * restart. Plan vends a crash left open are settled first from the journal alone (nothing to ask the
 * service); paid sessions wait for the service in `connectService` as before, and no paid session can
 * open meanwhile. Null when members only does not apply or the daemon stops first.
 */
async function serveMembers(
  ctx: UnitContext,
  engine: EnginePart,
  members: MembersPart,
): Promise<VendEngine | null> {
  const m = members.current;
  if (m === null || (ctx.options.flow ?? "selection") !== "selection") return null;
  if (m.store.current() === null) {
    ctx.logger.info("no entitlement list in force: nobody is served before the payment service answers");
    return null;
  }
  await engine.recover("only");
  const e = engine.create();
  if (!(await engine.run(e, null))) return null;
  ctx.state.setMembersOnly(true);
  await ctx.hooks.emitRunning(e);
  return e;
}

async function serve(ctx: UnitContext, engine: EnginePart, members: MembersPart): Promise<void> {
  const { state, stopping } = ctx;
  let e = await serveMembers(ctx, engine, members);
  if (stopping.signal.aborted) return;
  const identity = await connectService({
    clock: ctx.clock,
    random: ctx.random,
    signal: stopping.signal,
    logger: ctx.logger.child({ component: "connect" }),
    policy: ctx.policy,
    open: (signal) => ctx.devices.payment.open(signal),
    recover: () => engine.recover(),
    onSetback: (reason) => state.setConnect(reason),
  });
  if (identity === null) return;
  if (e === null) {
    e = engine.create();
    if (!(await engine.run(e, identity))) return;
    state.setConnect(null);
    await ctx.hooks.emitRunning(e);
  } else {
    e.paymentsBack(identity);
    state.setMembersOnly(false);
    state.setConnect(null);
    ctx.hooks.emitPaymentsBack();
  }
  if (stopping.signal.aborted) return;
  ctx.hooks.emitInService(e);
}

export function servicePart(engine: EnginePart, members: MembersPart): Part<{ goingInService: boolean }> {
  let ctx: UnitContext | null = null;
  let readyTimer: Timer | null = null;
  let serving: Promise<void> = Promise.resolve();
  let done = false;
  return {
    name: "service",
    start(c) {
      ctx = c;
      readyTimer = c.clock.setTimer(c.deps.readyGraceMs ?? 10_000, () => c.state.ready());
      serving = serve(c, engine, members).catch((err: unknown) => c.fail(err));
      void serving.then(() => {
        done = true;
      });
    },
    async stop() {
      if (ctx === null) return;
      ctx.state.setStopping();
      ctx.deps.notifier.stopping();
      ctx.stopping.abort(new Error("daemon stopping"));
      readyTimer?.cancel();
      await serving;
      await engine.healing;
    },
    status: () => ({ goingInService: !done && ctx !== null }),
  };
}
