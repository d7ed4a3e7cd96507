import type { BindingInterface } from "@serialport/bindings-cpp";
import type { Logger } from "pino";
import type { Clock } from "../../../src/core/clock.js";
import { VmcError } from "../controller.js";
import { LinkWatch } from "./linkWatch.js";
import type { ResolvedOptions } from "./options.js";
import { SerialLink } from "./serialLink.js";

/** What the supervisor needs from the controller. */
export interface SupervisorDeps {
  o: ResolvedOptions;
  clock: Clock;
  log: Logger;
  binding: BindingInterface | undefined;
  onLine(line: string): void;
  /** The port went away (unplug, adapter power loss, write failure); reopening has started. */
  onLost(): void;
  /** Runs after each reopen (configuration); a rejection closes the port and the next attempt follows. */
  afterReopen(): Promise<void>;
  /** Link health changed (`r,ACK` seen again, or silence / loss). */
  onLink(up: boolean): void;
}

/**
 * Owns the serial port across unplug and replug: opens it, reports its loss, and reopens it with capped
 * exponential backoff (`reopenMinMs` doubling up to `reopenMaxMs`) until it is back or `close()` is called.
 */
export class LinkSupervisor {
  readonly watch: LinkWatch;
  private link: SerialLink | null = null;
  private reconnect: AbortController | null = null;
  private closed = false;

  constructor(private readonly d: SupervisorDeps) {
    this.watch = new LinkWatch(d.clock, d.o.linkTimeoutMs, (up) => d.onLink(up));
  }

  get isOpen(): boolean {
    return this.link !== null;
  }

  get reopening(): boolean {
    return this.reconnect !== null;
  }

  /** Opens the port once; rejects with VmcError "io" when it cannot. */
  async open(): Promise<void> {
    const o = this.d.o;
    let self: SerialLink | null = null;
    let link: SerialLink;
    try {
      link = await SerialLink.open(
        { ...o, binding: this.d.binding, clock: this.d.clock },
        {
          onLine: (line) => this.d.onLine(line),
          onOverlong: (count) => this.d.log.warn({ count, max: o.maxLineBytes }, "over-long line discarded"),
          onLost: (reason) => {
            if (self) this.lost(self, reason);
          },
        },
      );
    } catch (err) {
      throw new VmcError("io", `cannot open ${o.path}: ${errText(err)}`);
    }
    self = link;
    if (this.closed) {
      await link.close();
      throw new VmcError("closed", "the controller closed while opening");
    }
    this.link = link;
    this.watch.start();
  }

  /** Writes to the current port; a failed write counts as losing the port. */
  write(text: string): Promise<void> {
    const link = this.link;
    if (!link) return Promise.reject(new VmcError("io", "the serial link is down"));
    return link.write(text).catch((err: unknown) => {
      this.lost(link, `write failed: ${errText(err)}`);
      throw new VmcError("io", `write failed: ${errText(err)}`);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.reconnect?.abort();
    this.watch.stop();
    const link = this.link;
    this.link = null;
    await link?.close();
  }

  private lost(link: SerialLink, reason: string): void {
    if (this.closed || this.link !== link) return;
    this.link = null;
    void link.close();
    this.d.log.warn({ reason }, "serial link lost");
    this.watch.lost();
    this.d.onLost();
    if (!this.reconnect) this.reopenLoop();
  }

  private reopenLoop(): void {
    const ac = new AbortController();
    this.reconnect = ac;
    const loop = async () => {
      let delay = this.d.o.reopenMinMs;
      for (let attempt = 1; !this.closed; attempt++) {
        await this.d.clock.sleep(delay, ac.signal);
        try {
          await this.open();
          await this.d.afterReopen();
          this.d.log.info({ attempt }, "serial link reopened and configured");
          return;
        } catch (err) {
          delay = Math.min(delay * 2, this.d.o.reopenMaxMs);
          this.d.log.warn({ attempt, err: errText(err), nextMs: delay }, "reopen failed");
          const stale = this.link;
          this.link = null;
          if (stale) {
            this.watch.lost();
            this.d.onLost();
            await stale.close();
          }
        }
      }
    };
    loop()
      .catch(() => undefined)
      .finally(() => {
        if (this.reconnect === ac) this.reconnect = null;
      });
  }
}

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
