import type { Minor } from "../../../src/core/money.js";
import { formatAmount, MoneyFormatError, parseAmount } from "../../../src/core/money.js";

/**
 * The adapter side of the host commands (vending-mdb §2.2), as the simulator enforces them. A recorded
 * approval keeps the requested price beside the approved amount so tests can assert they were equal.
 */
export type SimReader = "off" | "inactive" | "disabled" | "enabled" | "idle" | "vend" | "approved";

export interface Approval {
  /** The VMC's ordinal of the session the vend was requested in (1 = the first session it saw). */
  session: number;
  /** The VMC's ordinal of the vend request approved (1 = the first request), as `SimState.requests`. */
  request: number;
  item: number;
  price: Minor;
  amount: Minor;
}

/** The state the simulator's host-command handling reads and changes. */
export interface SimState {
  reader: SimReader;
  /** SETCONF values; volatile: cleared by an adapter power-cycle (§2.2). */
  config: Map<string, string>;
  /** The session was begun by the host (`C,START`), authorization first. */
  hostSession: boolean;
  /** The pending or approved vend request, with the VMC's ordinals of its session and of the request. */
  vend: { item: number; price: Minor; session: number; request: number } | null;
  /** Sessions the VMC has seen begin (a host `C,START`, or a vend request outside a session), so far. */
  sessions: number;
  /** Vend requests the VMC has made so far: the last one's ordinal. */
  requests: number;
  approvals: Approval[];
  displays: string[];
  /** Protocol violations by the host (an approval of a different amount, unknown commands, …). */
  violations: string[];
}

/** What a host command does: lines to send back, and whether the VMC then sets up and enables the reader. */
export interface HostReply {
  lines: string[];
  vmcSetup: boolean;
}

const SETCONF = /^([a-z0-9-]+)=([a-z0-9x-]+)$/i;

export function handleHostLine(st: SimState, line: string, decimals: number): HostReply {
  const reply = (...lines: string[]): HostReply => ({ lines, vmcSetup: false });
  const amount = (text: string): Minor | null => {
    try {
      return parseAmount(text, decimals);
    } catch (err) {
      if (err instanceof MoneyFormatError) return null;
      throw err;
    }
  };
  const f = line.split(",");
  if (f[0] !== "C") {
    st.violations.push(`not a cashless command: ${line.slice(0, 40)}`);
    return reply();
  }
  const [, cmd, arg, extra] = f;
  switch (cmd) {
    case "0":
      st.reader = "off";
      st.vend = null;
      st.hostSession = false;
      return reply("c,0");
    case "1":
      if (st.reader !== "off") return reply("c,1");
      st.reader = "inactive";
      return { lines: ["c,STATUS,INACTIVE", "c,1"], vmcSetup: true };
    case "SETCONF": {
      // §2.2: only while disabled, else c,ERR,"cashless is on".
      if (st.reader !== "off") return reply('c,ERR,"cashless is on"');
      const m = SETCONF.exec(f.slice(2).join(","));
      if (!m?.[1] || !m[2]) return reply('c,ERR,"SETCONF -1"');
      st.config.set(m[1], m[2]);
      return reply("c,SET,OK");
    }
    case "START": {
      const funds = arg === undefined ? null : amount(arg);
      if (st.reader !== "enabled") return reply('c,ERR,"START -3"');
      if (funds === null) return reply('c,ERR,"START -1"');
      st.reader = "idle";
      st.hostSession = true;
      st.sessions++;
      return reply(`c,STATUS,IDLE,${formatAmount(funds, decimals)}`);
    }
    case "VEND":
      if (arg === "-1") return deny(st);
      return approve(st, arg, extra, amount);
    case "STOP":
      if (st.reader === "vend") return deny(st); // the always-idle tutorial denies with C,STOP (§2.2)
      if (st.reader !== "idle") return reply('c,ERR,"STOP -3"');
      st.reader = "enabled";
      st.hostSession = false;
      return reply("c,STATUS,ENABLED");
    case "DISPLAY": {
      const text = f.slice(2).join(",");
      if (text.length > 32) return reply('c,ERR,"DISPLAY -1"');
      if (st.reader === "off") return reply('c,ERR,"DISPLAY -3"');
      st.displays.push(text);
      return reply("r,ACK"); // the next poll carries the DISPLAY REQUEST
    }
    default:
      st.violations.push(`unknown command: ${line.slice(0, 40)}`);
      return reply('c,ERR,"unknown command"');
  }
}

function deny(st: SimState): HostReply {
  if (st.reader !== "vend") return { lines: ['c,ERR,"VEND -3"'], vmcSetup: false };
  st.vend = null;
  // §2.4 deny: IDLE, then the VMC ends a session it did not get from the host.
  if (st.hostSession) {
    st.reader = "idle";
    return { lines: ["c,STATUS,IDLE"], vmcSetup: false };
  }
  st.reader = "enabled";
  return { lines: ["c,STATUS,IDLE", "c,STATUS,ENABLED"], vmcSetup: false };
}

function approve(
  st: SimState,
  arg: string | undefined,
  item: string | undefined,
  amount: (text: string) => Minor | null,
): HostReply {
  const value = arg === undefined ? null : amount(arg);
  if (st.reader !== "vend" || !st.vend) return { lines: ['c,ERR,"VEND -3"'], vmcSetup: false };
  if (value === null) return { lines: ['c,ERR,"VEND -1"'], vmcSetup: false };
  if (item !== undefined && Number(item) !== st.vend.item) st.violations.push(`approval names item ${item}`);
  // §2.5 exact amounts: a real VMC vends whatever amount it gets; the simulator records the mismatch.
  if (value !== st.vend.price) st.violations.push(`approved ${value} for a request of ${st.vend.price}`);
  const { session, request } = st.vend;
  st.approvals.push({ session, request, item: st.vend.item, price: st.vend.price, amount: value });
  st.reader = "approved";
  return { lines: ["r,ACK"], vmcSetup: false }; // the poll that picked up VEND APPROVED (§2.4)
}
