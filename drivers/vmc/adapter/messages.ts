import type { Minor } from "../../../src/core/money.js";

/**
 * Dialect-neutral messages between vendd and a cashless bridge. A dialect (the adapter line protocol of
 * vending-mdb §2, or a MateDealer-style bridge of §4) only parses and formats lines; the session state
 * machine (machine.ts) sees these messages and nothing else.
 */

/** Reader states the bridge reports as the VMC drives them (vending-mdb §1.2, §2.3). */
export type ReaderStatus = "inactive" | "disabled" | "enabled";

/** What the bridge told us, one line = one message. */
export type DeviceMsg =
  /** The VMC polled us (`r,ACK`): link health and "the VMC picked up our last answer". */
  | { kind: "ack" }
  | { kind: "status"; status: ReaderStatus }
  /** Session open (`Session Idle`); `funds` when the bridge reports them. */
  | { kind: "sessionIdle"; funds: Minor | null }
  /** VEND REQUEST: the customer chose `item` at `price`. */
  | { kind: "vendRequest"; price: Minor; item: number }
  | { kind: "vendSuccess"; item: number | null }
  /** VEND FAILURE (`c,ERR,VEND 3`). */
  | { kind: "vendFailure" }
  /** VEND CANCEL by the VMC (`c,ERR,VEND 1`). */
  | { kind: "vendCancel" }
  /** The bridge reports a reset during a vend (`c,ERR,VEND 5`). */
  | { kind: "vendReset" }
  /** Echo of the cashless function switch (`c,0` / `c,1`). */
  | { kind: "switched"; enabled: boolean }
  /** Configuration accepted (`c,SET,OK`). */
  | { kind: "configured" }
  /** Any other error line; `text` is the bridge's own words (bounded). */
  | { kind: "error"; text: string }
  /** A well-formed line that carries nothing for the session (version, hardware, sniffer). */
  | { kind: "info"; text: string };

/** A line the dialect could not read; never becomes an event. */
export interface InvalidLine {
  kind: "invalid";
  reason: string;
}

/** What vendd asks the bridge to do. */
export type HostCmd =
  | { kind: "switch"; enabled: boolean }
  | { kind: "setconf"; key: string; value: string }
  | { kind: "start"; funds: Minor }
  | { kind: "approve"; amount: Minor }
  | { kind: "deny" }
  | { kind: "stop" }
  | { kind: "display"; text: string };

export type HostCmdKind = HostCmd["kind"];

/** Reader configuration sent at every open and after every reset (vending-mdb §2.2, §2.5). */
export interface ReaderConfig {
  currencyCode: "DKK" | "EUR";
  /** Selection first (`mdb-always-idle=1`), default true. */
  alwaysIdle: boolean;
}

/** Parsing and formatting of one bridge's line protocol. */
export interface LineDialect {
  readonly name: string;
  /** The exact keep-alive line (compared raw, before any parsing), e.g. `r,ACK`. */
  readonly keepAlive: string;
  /** Line terminator for host commands. */
  readonly eol: string;
  /** Reads one line (terminator removed). */
  parse(line: string): DeviceMsg | InvalidLine;
  /** Formats one command (without terminator). Throws `RangeError` when the command cannot be expressed. */
  format(cmd: HostCmd): string;
  /** The configuration commands, in order, to send while the cashless function is off. */
  configure(config: ReaderConfig): HostCmd[];
}
