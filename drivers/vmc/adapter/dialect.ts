import { formatAmount, MoneyFormatError, parseAmount } from "../../../src/core/money.js";
import type { DeviceMsg, HostCmd, InvalidLine, LineDialect, ReaderConfig, ReaderStatus } from "./messages.js";

/** ISO 4217 numeric codes with the leading `1` of MDB's packed BCD (vending-mdb §1.6, §2.2). */
const CURRENCY_HEX: Record<ReaderConfig["currencyCode"], string> = { DKK: "0x1208", EUR: "0x1978" };

const PRINTABLE = /^[\x20-\x7e]*$/;
const ITEM = /^\d{1,5}$/;
const SETCONF_TOKEN = /^[a-z0-9x-]{1,32}$/i;
/** Longest error text kept from a `c,ERR,…` line (it ends up in logs). */
const MAX_ERROR_TEXT = 64;

const STATUSES: Record<string, ReaderStatus> = {
  INACTIVE: "inactive",
  DISABLED: "disabled",
  ENABLED: "enabled",
};

function invalid(reason: string): InvalidLine {
  return { kind: "invalid", reason };
}

function amount(text: string, decimals: number): number | InvalidLine {
  try {
    return parseAmount(text, decimals);
  } catch (err) {
    if (err instanceof MoneyFormatError) return invalid(err.message);
    throw err;
  }
}

function parseCashless(f: string[], decimals: number): DeviceMsg | InvalidLine {
  const [, head, a, b, c, ...rest] = f;
  if (f.length === 2 && (head === "0" || head === "1")) return { kind: "switched", enabled: head === "1" };
  if (head === "STATUS" && a !== undefined) {
    const status = STATUSES[a];
    if (status && f.length === 3) return { kind: "status", status };
    if (a === "IDLE" && f.length <= 4) {
      if (b === undefined) return { kind: "sessionIdle", funds: null };
      const funds = amount(b, decimals);
      return typeof funds === "number" ? { kind: "sessionIdle", funds } : funds;
    }
    // §2.3: c,STATUS,VEND,<amount>,<item>
    if (a === "VEND" && b !== undefined && c !== undefined && rest.length === 0) {
      if (!ITEM.test(c) || Number(c) > 0xffff) return invalid(`bad item number in vend request`);
      const price = amount(b, decimals);
      return typeof price === "number" ? { kind: "vendRequest", price, item: Number(c) } : price;
    }
    return invalid("unknown status line");
  }
  if (head === "VEND" && a === "SUCCESS" && f.length <= 4) {
    if (b === undefined) return { kind: "vendSuccess", item: null };
    return ITEM.test(b) ? { kind: "vendSuccess", item: Number(b) } : invalid("bad item in vend success");
  }
  if (head === "SET" && a === "OK" && f.length === 3) return { kind: "configured" };
  if (head === "ERR" && a !== undefined) {
    const text = f
      .slice(2)
      .join(",")
      .replace(/^"(.*)"$/, "$1")
      .slice(0, MAX_ERROR_TEXT);
    // §2.3: VEND 1 = VEND CANCEL, VEND 3 = VEND FAILURE (MDB sub-commands), VEND 5 = reset during vend [C].
    if (text === "VEND 1") return { kind: "vendCancel" };
    if (text === "VEND 3") return { kind: "vendFailure" };
    if (text === "VEND 5") return { kind: "vendReset" };
    return { kind: "error", text };
  }
  return invalid("unknown cashless line");
}

/** A host command as its `C,…` line. */
function formatCommand(cmd: HostCmd, decimals: number): string {
  switch (cmd.kind) {
    case "switch":
      return cmd.enabled ? "C,1" : "C,0";
    case "setconf":
      if (!SETCONF_TOKEN.test(cmd.key) || !SETCONF_TOKEN.test(cmd.value)) {
        throw new RangeError("setconf key or value has characters the adapter does not take");
      }
      return `C,SETCONF,${cmd.key}=${cmd.value}`;
    case "start":
      return `C,START,${formatAmount(cmd.funds, decimals)}`;
    case "approve":
      return `C,VEND,${formatAmount(cmd.amount, decimals)}`;
    case "deny":
      // §2.2 project resolution: deny a pending vend request with C,VEND,-1.
      return "C,VEND,-1";
    case "stop":
      return "C,STOP";
    case "display":
      if (cmd.text.length > 32 || !PRINTABLE.test(cmd.text)) {
        throw new RangeError("display text must be at most 32 printable ASCII characters");
      }
      return `C,DISPLAY,${cmd.text}`;
  }
}

/**
 * The "cashless slave" adapter line protocol (vending-mdb §2): `C,…` commands, `c,…` replies and events,
 * `r,ACK` polls. Amounts are decimal money values parsed exactly into minor units (§2.5 "exact amounts").
 * @param decimals the currency's decimal places (2 for DKK and EUR).
 */
export function createCashlessDialect(decimals = 2): LineDialect {
  return {
    name: "cashless-adapter",
    keepAlive: "r,ACK",
    eol: "\n",
    parse(line) {
      if (!PRINTABLE.test(line)) return invalid("non-printable bytes");
      if (line === "r,ACK") return { kind: "ack" };
      const f = line.split(",");
      switch (f[0]) {
        case "c":
          return parseCashless(f, decimals);
        case "v":
        case "h":
        case "x":
        case "f":
        case "d":
        case "r":
          return f.length > 1
            ? { kind: "info", text: line.slice(0, MAX_ERROR_TEXT) }
            : invalid("empty reply");
        default:
          return invalid("unknown prefix");
      }
    },
    format: (cmd) => formatCommand(cmd, decimals),
    configure(config) {
      return [
        { kind: "setconf", key: "mdb-currency-code", value: CURRENCY_HEX[config.currencyCode] },
        { kind: "setconf", key: "mdb-always-idle", value: config.alwaysIdle ? "1" : "0" },
      ];
    },
  };
}
