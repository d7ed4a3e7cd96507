/**
 * A part of the running unit (the payment driver, the VMC link, the engine, the control socket, the fleet
 * link, ...): started in the order of the unit's list, stopped in the reverse order, and asked for its
 * status. The unit (../unit.ts) is the list; a new part is one more entry in it.
 */
import type { UnitContext } from "./context.js";

export interface Part<S = unknown> {
  /** Short name (logs, docs, the composed status). */
  readonly name: string;
  /**
   * Starts the part; returns at once. Work that waits (a socket to listen, the payment service to answer)
   * runs in the background: a part that cannot work degrades (logged, status), a fatal error goes to
   * `ctx.fail`. Parts that need the engine running subscribe to the context's hooks here.
   */
  start(ctx: UnitContext): void;
  /** Stops the part and waits for its background work; called once, after every later part has stopped. */
  stop(): Promise<void>;
  /** What the part says about itself (a small value), or null when it has nothing to say. */
  status(): S;
}

/** Starts `parts` in order, stops them in reverse order, and composes their status. */
export class PartList {
  constructor(private readonly parts: readonly Part[]) {}

  start(ctx: UnitContext): void {
    for (const part of this.parts) part.start(ctx);
  }

  /** Each part in reverse order, each waited for before the next (the journal, first in, closes last). */
  async stop(): Promise<void> {
    for (const part of [...this.parts].reverse()) await part.stop();
  }

  /** Every part's status by name. */
  status(): Record<string, unknown> {
    return Object.fromEntries(this.parts.map((p) => [p.name, p.status()]));
  }

  names(): string[] {
    return this.parts.map((p) => p.name);
  }
}
