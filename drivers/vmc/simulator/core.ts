import type { Minor } from "../../../src/core/money.js";
import { formatAmount } from "../../../src/core/money.js";
import { LineSplitter } from "../adapter/lineSplitter.js";
import { handleHostLine, type SimState } from "./hostCommands.js";

/** A scripted VMC action that the current state does not allow (a bug in the test script). */
export class VmcSimError extends Error {
  override readonly name = "VmcSimError";
  readonly code = "sim-state";
}

export interface VmcSimCoreOptions {
  /** Decimal places of amounts on the wire; default 2. */
  decimals?: number;
  /** The VMC sets up and enables the reader as soon as the host switches it on; default true. */
  autoEnable?: boolean;
}

/** How a vend ends from the VMC's side. */
export interface EndOptions {
  /** The VMC ends the session after this vend (SESSION COMPLETE); false keeps it open (multi-vend). */
  endSession?: boolean;
}

/**
 * The adapter and the VMC behind it, transport-free: host lines in, adapter lines out (vending-mdb §2).
 * It records every host command and enforces the protocol the way the adapter does.
 */
export class VmcSimCore {
  readonly state: SimState = {
    reader: "off",
    config: new Map(),
    hostSession: false,
    vend: null,
    sessions: 0,
    requests: 0,
    approvals: [],
    displays: [],
    violations: [],
  };
  /** Every host line received, in order. */
  readonly commands: string[] = [];
  private readonly decimals: number;
  private readonly autoEnable: boolean;
  private readonly splitter = new LineSplitter(1024);
  private readonly listeners = new Set<(line: string) => void>();
  private readonly sentListeners = new Set<(data: string) => void>();
  private out: ((data: string) => void) | null = null;

  constructor(opts: VmcSimCoreOptions = {}) {
    this.decimals = opts.decimals ?? 2;
    this.autoEnable = opts.autoEnable ?? true;
  }

  /** Connects the output (or disconnects it with `null`: lines are then lost, as on a pulled cable). */
  connect(out: ((data: string) => void) | null): void {
    this.out = out;
    this.splitter.reset();
  }

  /** Bytes from the host. */
  receive(chunk: Uint8Array): void {
    const { lines, overlong } = this.splitter.push(chunk);
    if (overlong > 0) this.state.violations.push(`${overlong} over-long host line(s)`);
    for (const line of lines) this.onHostLine(line);
  }

  /** Subscribes to host lines; returns the unsubscribe function. */
  onCommand(listener: (line: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Subscribes to the bytes sent to the host, called right after they were handed to the transport (a
   * bench's timestamp of a line the VMC wrote); returns the unsubscribe function.
   */
  onSent(listener: (data: string) => void): () => void {
    this.sentListeners.add(listener);
    return () => this.sentListeners.delete(listener);
  }

  /** Sends raw lines to the host (each gets `\n`). */
  send(...lines: string[]): void {
    if (lines.length === 0 || !this.out) return;
    const data = `${lines.join("\n")}\n`;
    this.out(data);
    for (const l of this.sentListeners) l(data);
  }

  /** The VMC's SETUP and READER ENABLE (§1.2): `DISABLED`, then `ENABLED`. */
  vmcSetup(): void {
    if (this.state.reader !== "inactive")
      throw new VmcSimError(`setup needs inactive, not ${this.state.reader}`);
    this.state.reader = "enabled";
    this.send("c,STATUS,DISABLED", "c,STATUS,ENABLED");
  }

  /** The customer chooses `item` at `price` (VEND REQUEST): selection first, or inside a session. */
  vend(item: number, price: Minor): void {
    const st = this.state;
    // §1.4: outside a session only when the reader was configured always-idle.
    const alwaysIdle = st.config.get("mdb-always-idle") === "1";
    if (!(st.reader === "idle" || (st.reader === "enabled" && alwaysIdle))) {
      throw new VmcSimError(`no vend request possible in ${st.reader} (always-idle ${alwaysIdle})`);
    }
    // Selection first (always-idle): the vend request itself begins the VMC's session.
    if (st.reader === "enabled") st.sessions++;
    st.requests++;
    st.vend = { item, price, session: st.sessions, request: st.requests };
    st.reader = "vend";
    this.send(`c,STATUS,VEND,${formatAmount(price, this.decimals)},${item}`);
  }

  /** The approved product was delivered (VEND SUCCESS). */
  dispenseSuccess(opts: EndOptions = {}): void {
    this.takeApproved();
    this.send("c,VEND,SUCCESS", ...this.afterVend(opts));
  }

  /** The approved product did not come out (VEND FAILURE, `c,ERR,VEND 3`). */
  dispenseFailure(opts: EndOptions = {}): void {
    this.takeApproved();
    this.send("c,ERR,VEND 3", ...this.afterVend(opts));
  }

  /**
   * The return button (§1.4): VEND CANCEL in a vend, SESSION COMPLETE in a session. After VEND CANCEL the
   * reader is back in Session Idle (§1.2, §1.3): a session the host began goes on, the implicit session of
   * a selection-first vend is ended by the VMC (§2.4 "Return button").
   */
  customerCancel(): void {
    const st = this.state;
    if (st.reader === "vend" && st.hostSession) {
      st.vend = null;
      st.reader = "idle";
      this.send("c,ERR,VEND 1", "c,STATUS,IDLE");
    } else if (st.reader === "vend") {
      st.vend = null;
      this.endSession("c,ERR,VEND 1");
    } else if (st.reader === "idle") {
      this.endSession();
    } else {
      throw new VmcSimError(`nothing to cancel in ${st.reader}`);
    }
  }

  /** The VMC ends an idle session (SESSION COMPLETE). */
  completeSession(): void {
    if (this.state.reader !== "idle") throw new VmcSimError(`no idle session (${this.state.reader})`);
    this.endSession();
  }

  /** The VMC resets the bus: a reader on the bus goes `INACTIVE`; configuration is kept. */
  vmcReset(): void {
    if (this.state.reader !== "off") this.resetReader();
  }

  /**
   * The adapter loses power and comes back with its cashless function on and its configuration lost
   * (§2.2: not persistent); the VMC resets it, so the host sees `INACTIVE`.
   */
  adapterPowerCycle(): void {
    this.state.config.clear();
    this.resetReader();
  }

  private resetReader(): void {
    const st = this.state;
    st.vend = null;
    st.hostSession = false;
    st.reader = "inactive";
    this.send("c,STATUS,INACTIVE");
    if (this.autoEnable) this.vmcSetup();
  }

  private takeApproved(): void {
    const st = this.state;
    if (st.reader !== "approved" || !st.vend) throw new VmcSimError(`no approved vend (${st.reader})`);
    st.vend = null;
  }

  private afterVend(opts: EndOptions): string[] {
    const st = this.state;
    st.reader = "idle";
    if (opts.endSession === false) return ["c,STATUS,IDLE"];
    st.reader = "enabled";
    st.hostSession = false;
    return ["c,STATUS,IDLE", "c,STATUS,ENABLED"];
  }

  private endSession(...first: string[]): void {
    this.state.reader = "enabled";
    this.state.hostSession = false;
    this.send(...first, "c,STATUS,ENABLED");
  }

  private onHostLine(line: string): void {
    this.commands.push(line);
    for (const l of this.listeners) l(line);
    const reply = handleHostLine(this.state, line, this.decimals);
    this.send(...reply.lines);
    if (reply.vmcSetup && this.autoEnable) this.vmcSetup();
  }
}
