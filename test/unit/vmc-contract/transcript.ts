import { LineSplitter } from "../../../drivers/vmc/adapter/lineSplitter.js";
import { formatAmount, type Minor, MoneyFormatError, parseAmount } from "../../../src/core/money.js";
import type { EndOptions } from "./subject.js";

type Reader = "off" | "enabled" | "idle" | "vend" | "approved";

/** A machine action the transcripts do not allow in the current state: a bug in the case, not the driver. */
export class TranscriptError extends Error {
  override readonly name = "TranscriptError";
}

/**
 * The adapter and the VMC behind it written as vending-mdb §2.4 writes them down: every reply to a host
 * command and every machine action is the line sequence of an example session there (start-up, selection
 * first, authorization first, multi-vend, deny, dispense failure, return button), so the driver is checked
 * against the reference's own transcripts, independently of the simulator core. Where §2.4 shows only the
 * selection-first variant, a host-begun session goes back to `Session Idle` (`c,STATUS,IDLE`, §1.2, §1.3).
 * A host line the transcripts do not cover in the current state is recorded as a violation, not answered.
 */
export class TranscriptMachine {
  private reader: Reader = "off";
  /** The session was begun by the host (`C,START`); else a selection-first vend's implicit session. */
  private hostSession = false;
  private pending: { item: number; price: Minor } | null = null;
  /** After a reset or replug the machine waits for the host's `C,1` before it counts as ready. */
  private awaitingHost = false;
  private muted = false;
  private out: ((data: string) => boolean) | null = null;
  private readonly splitter = new LineSplitter(1024);
  readonly config = new Map<string, string>();
  readonly approvals: Minor[] = [];
  readonly displays: string[] = [];
  readonly violations: string[] = [];

  constructor(private readonly decimals = 2) {}

  /** Connects the line output (false from `out`: the port is closed and the bytes are lost). */
  connect(out: ((data: string) => boolean) | null): void {
    this.out = out;
    this.splitter.reset();
  }

  get ready(): boolean {
    return !this.awaitingHost && (this.reader === "enabled" || this.reader === "idle");
  }

  /** Sends lines to the host; false when they could not be delivered. */
  send(...lines: string[]): boolean {
    return this.out?.(lines.map((l) => `${l}\n`).join("")) ?? false;
  }

  silence(on: boolean): void {
    this.muted = on;
  }

  /** Bytes the host wrote. */
  receive(chunk: Uint8Array): void {
    for (const line of this.splitter.push(chunk).lines) {
      if (this.muted) continue;
      const why = this.onHost(line);
      if (why !== null) this.violations.push(`${line} (${why}; reader ${this.reader})`);
    }
  }

  /** The customer chooses (selection first needs `mdb-always-idle=1`, §1.4). */
  requestVend(item: number, price: Minor): boolean {
    const alwaysIdle = this.config.get("mdb-always-idle") === "1";
    if (!(this.reader === "idle" || (this.reader === "enabled" && alwaysIdle))) return false;
    if (!this.send(`c,STATUS,VEND,${formatAmount(price, this.decimals)},${item}`)) return false;
    this.pending = { item, price };
    this.reader = "vend";
    return true;
  }

  /** §2.4 "Selection first … success", "Dispense failure", "Multi-vend". */
  dispense(outcome: "success" | "failure", opts: EndOptions): void {
    this.expect("approved", "dispense");
    const lines = [outcome === "success" ? "c,VEND,SUCCESS" : "c,ERR,VEND 3", "c,STATUS,IDLE"];
    this.pending = null;
    this.reader = "idle";
    // The VMC ends a selection-first vend's implicit session; a host session only when told to.
    if (opts.endSession || !this.hostSession) lines.push(this.endSession());
    this.send(...lines);
  }

  /** §2.4 "Return button" during a request: VEND CANCEL; MDB then returns the reader to Session Idle. */
  withdrawRequest(): void {
    this.expect("vend", "withdraw");
    this.pending = null;
    this.reader = "idle";
    this.send("c,ERR,VEND 1", this.hostSession ? "c,STATUS,IDLE" : this.endSession());
  }

  /** §2.4 "Return button" in an idle session: SESSION COMPLETE. */
  completeSession(): void {
    this.expect("idle", "complete");
    this.send(this.endSession());
  }

  /** §2.5: the VMC resets the reader (INACTIVE), then sets it up and enables it again (§1.2). */
  reset(): void {
    this.pending = null;
    this.hostSession = false;
    this.reader = "enabled";
    this.awaitingHost = true;
    this.send("c,STATUS,INACTIVE", "c,STATUS,DISABLED", "c,STATUS,ENABLED");
  }

  /** The adapter is back after an unplug: it waits for the host's configuration. */
  replugged(): void {
    this.awaitingHost = true;
  }

  private endSession(): string {
    this.reader = "enabled";
    this.hostSession = false;
    return "c,STATUS,ENABLED";
  }

  private expect(reader: Reader, action: string): void {
    if (this.reader !== reader) throw new TranscriptError(`${action} needs ${reader}, not ${this.reader}`);
  }

  /** Answers one host line; returns why it is out of protocol, or null. */
  private onHost(line: string): string | null {
    const f = line.split(",");
    const [c, cmd, arg] = f;
    if (c !== "C") return "not a cashless command";
    switch (cmd) {
      case "0":
        this.reader = "off";
        this.pending = null;
        this.hostSession = false;
        this.send("c,0");
        return null;
      case "SETCONF": {
        // §2.2: only while the cashless function is off.
        if (this.reader !== "off") return "SETCONF while on";
        const [key = "", value = ""] = f.slice(2).join(",").split("=");
        this.config.set(key, value);
        this.send("c,SET,OK");
        return null;
      }
      case "1":
        if (this.reader !== "off") return "already on";
        this.reader = "enabled";
        this.awaitingHost = false;
        this.send("c,STATUS,INACTIVE", "c,1", "c,STATUS,DISABLED", "c,STATUS,ENABLED");
        return null;
      case "START":
        if (this.reader !== "enabled" || arg === undefined) return "no enabled reader";
        this.reader = "idle";
        this.hostSession = true;
        this.send(`c,STATUS,IDLE,${arg}`);
        return null;
      case "VEND":
        return this.onVend(arg);
      case "STOP":
        if (this.reader !== "idle" || !this.hostSession) return "no idle host session";
        this.send(this.endSession());
        return null;
      case "DISPLAY": {
        const text = f.slice(2).join(",");
        if (this.reader === "off" || text.length > 32) return "display refused";
        this.displays.push(text);
        this.send("r,ACK");
        return null;
      }
      default:
        return "unknown command";
    }
  }

  private onVend(arg: string | undefined): string | null {
    const p = this.pending;
    if (this.reader !== "vend" || p === null) return "no vend request";
    if (arg === "-1") {
      // §2.4 "Deny": IDLE, then the VMC ends a session it did not get from the host.
      this.pending = null;
      this.reader = "idle";
      this.send("c,STATUS,IDLE", ...(this.hostSession ? [] : [this.endSession()]));
      return null;
    }
    let amount: Minor;
    try {
      amount = parseAmount(arg ?? "", this.decimals);
    } catch (err) {
      if (err instanceof MoneyFormatError) return "unreadable amount";
      throw err;
    }
    if (amount !== p.price) return `approved ${amount} for a request of ${p.price}`;
    this.approvals.push(amount);
    this.reader = "approved";
    this.send("r,ACK"); // the poll that picked up VEND APPROVED (§2.4)
    return null;
  }
}
