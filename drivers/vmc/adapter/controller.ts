import { type Logger, pino } from "pino";
import type { Clock, Timer } from "../../../src/core/clock.js";
import { displayable, type VendController, VmcError, type VmcEvent } from "../controller.js";
import { createCashlessDialect } from "./dialect.js";
import { step } from "./machine.js";
import type { HostCmd, LineDialect } from "./messages.js";
import { type AdapterControllerOptions, type ResolvedOptions, resolveOptions } from "./options.js";
import { initialState, type MachineInput, type MachineState, type Reader, type Step } from "./state.js";
import { errText, LinkSupervisor } from "./supervisor.js";

const ACK: MachineInput = { kind: "line", msg: { kind: "ack" } };
/** Reconfiguration attempts after an adapter reset before giving up until the next reset or reopen. */
const RECONFIGURE_ATTEMPTS = 3;

/** Creates the `VendController` for the MDB cashless adapter line protocol (vending-mdb §2). */
export function createAdapterController(opts: AdapterControllerOptions): AdapterController {
  return new AdapterController(opts);
}

/**
 * The runner around the pure session machine (machine.ts): the command queue (one command in flight, each
 * with a timeout fed back to the machine as an input), event delivery, and reconfiguration after a reset.
 * The port, link health and reopening belong to the `LinkSupervisor`. See `VendController` for the failure
 * semantics; in addition, `approveVend` that times out leaves the vend approved: its outcome may still
 * arrive (vending-mdb §1.5 rule 1), and a later `reset` event covers it otherwise.
 */
export class AdapterController implements VendController {
  readonly kind = "mdb-adapter" as const;
  private readonly o: ResolvedOptions;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly dialect: LineDialect;
  private readonly listeners = new Set<(event: VmcEvent) => void>();
  private readonly sup: LinkSupervisor;
  private state: MachineState = initialState;
  private chain: Promise<unknown> = Promise.resolve();
  private waiter: { resolve(): void; reject(err: VmcError): void; timer: Timer } | null = null;
  private opened = false;
  private closed = false;
  private reconfiguring = false;
  /** The pending command's bytes reached the OS: only an ACK after that can confirm it. */
  private written = false;
  private writeSeq = 0;
  private acks = 0;

  constructor(opts: AdapterControllerOptions) {
    this.o = resolveOptions(opts);
    this.clock = opts.clock;
    this.log = opts.logger ?? pino({ enabled: false });
    this.dialect = opts.dialect ?? createCashlessDialect(this.o.decimals);
    this.sup = new LinkSupervisor({
      o: this.o,
      clock: this.clock,
      log: this.log,
      binding: opts.binding,
      onLine: (line) => this.onLine(line),
      onLost: () => this.input({ kind: "linkLost" }),
      afterReopen: () => this.configure(),
      onLink: (up) => this.emit({ type: "link", up }),
    });
  }

  /** The reader state as the driver tracks it (diagnostics and tests). */
  get readerState(): Reader["s"] {
    return this.state.reader.s;
  }

  /** `r,ACK` lines received since construction (diagnostics and the benchmark). */
  get acksReceived(): number {
    return this.acks;
  }

  /** Link health: `true` while the VMC polls, `false` after silence or loss, `null` before we know. */
  get linkUp(): boolean | null {
    return this.sup.watch.state;
  }

  /**
   * Opens the port (VmcError "io" when it cannot) and configures the reader (VmcError "timeout"/"state" when
   * the adapter does not confirm). After a configuration failure the port stays open and `open()` may be
   * called again to retry the configuration.
   */
  async open(): Promise<void> {
    if (this.closed) throw new VmcError("closed", "the controller is closed");
    if (!this.opened) {
      this.opened = true;
      try {
        await this.sup.open();
      } catch (err) {
        this.opened = false;
        throw err;
      }
    }
    await this.configure();
  }

  async setEnabled(enabled: boolean): Promise<void> {
    // Checked first: enabling an already-on reader is a no-op that would otherwise hide the closed state.
    if (this.closed) throw new VmcError("closed", "the controller is closed");
    const off = this.state.reader.s === "offline";
    if (enabled === off) await (enabled ? this.configure() : this.run({ kind: "switch", enabled: false }));
  }

  beginSession(funds: number): Promise<void> {
    if (!isMinor(funds)) return Promise.reject(new VmcError("amount", `invalid funds ${funds}`));
    return this.run({ kind: "start", funds });
  }

  approveVend(amount: number): Promise<void> {
    if (!isMinor(amount)) return Promise.reject(new VmcError("amount", `invalid amount ${amount}`));
    return this.run({ kind: "approve", amount });
  }

  denyVend(): Promise<void> {
    return this.run({ kind: "deny" });
  }

  endSession(): Promise<void> {
    return this.run({ kind: "stop" });
  }

  displayText(text: string): Promise<void> {
    return this.run({ kind: "display", text: displayable(text) });
  }

  onEvent(listener: (event: VmcEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.settleWaiter({ ok: false, code: "closed", message: "the controller closed" });
    await this.sup.close();
  }

  /** Sends C,0, the dialect's configuration, C,1 (vending-mdb §2.4 start-up; §2.5: not persistent). */
  private async configure(): Promise<void> {
    await this.run({ kind: "switch", enabled: false });
    const config = { currencyCode: this.o.currencyCode, alwaysIdle: this.o.alwaysIdle };
    for (const cmd of this.dialect.configure(config)) await this.run(cmd);
    await this.run({ kind: "switch", enabled: true });
  }

  private run(cmd: HostCmd): Promise<void> {
    const done = this.chain.then(() => this.exec(cmd));
    this.chain = done.catch(() => undefined);
    return done;
  }

  private exec(cmd: HostCmd): Promise<void> {
    if (this.closed) return Promise.reject(new VmcError("closed", "the controller is closed"));
    if (!this.sup.isOpen) return Promise.reject(new VmcError("io", "the serial link is down"));
    const s = step(this.state, { kind: "command", cmd });
    if (!s.send) {
      this.apply(s);
      const why = s.settle && !s.settle.ok ? s.settle : { code: "state" as const, message: "refused" };
      return Promise.reject(new VmcError(why.code, why.message));
    }
    const text = this.dialect.format(s.send);
    const done = new Promise<void>((resolve, reject) => {
      const timer = this.clock.setTimer(this.o.commandTimeoutMs, () => this.input({ kind: "timeout" }));
      this.waiter = { resolve, reject, timer };
    });
    this.written = false;
    const seq = ++this.writeSeq;
    this.apply(s);
    this.log.debug({ line: text }, "vmc >");
    this.sup.write(text + this.dialect.eol).then(
      () => {
        if (seq === this.writeSeq) this.written = true;
      },
      () => undefined, // the supervisor reports the loss; the machine then settles the command with "io"
    );
    return done;
  }

  private input(i: MachineInput): void {
    this.apply(step(this.state, i));
  }

  private apply(s: Step): void {
    this.state = s.state;
    for (const entry of s.log) this.log[entry.level]({ state: s.state.reader.s }, entry.msg);
    if (s.settle) this.settleWaiter(s.settle);
    for (const event of s.events) this.emit(event);
    if (s.reconfigure) this.reconfigureSoon();
  }

  private settleWaiter(settle: NonNullable<Step["settle"]>): void {
    const w = this.waiter;
    if (!w) return;
    this.waiter = null;
    w.timer.cancel();
    if (settle.ok) w.resolve();
    else w.reject(new VmcError(settle.code, settle.message));
  }

  private emit(event: VmcEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.log.error({ err: errText(err), event: event.type }, "vmc event listener threw");
      }
    }
  }

  private onLine(line: string): void {
    // vending-mdb §2.5: the r,ACK flood is compared raw, before any parsing.
    if (line === this.dialect.keepAlive) {
      this.acks++;
      this.sup.watch.ack();
      const k = this.state.pending?.kind;
      if ((k === "approve" || k === "display") && this.written) this.input(ACK);
      return;
    }
    this.log.debug({ line }, "vmc <");
    this.input({ kind: "line", msg: this.dialect.parse(line) });
  }

  private reconfigureSoon(): void {
    if (this.reconfiguring || this.sup.reopening) return;
    this.reconfiguring = true;
    const attempt = async () => {
      for (let i = 0; i < RECONFIGURE_ATTEMPTS && !this.closed && this.sup.isOpen; i++) {
        try {
          await this.configure();
          this.log.info("reconfigured after adapter reset");
          return;
        } catch (err) {
          this.log.warn({ err: errText(err), attempt: i + 1 }, "reconfiguration failed");
          await this.clock.sleep(this.o.reopenMinMs * 2 ** i);
        }
      }
    };
    void attempt().finally(() => {
      this.reconfiguring = false;
    });
  }
}

const isMinor = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;
