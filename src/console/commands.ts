/**
 * The technician console's command words: help text, parsing a typed line into a control request, and
 * tab completion. Pure (no I/O), so it is tested on its own.
 */
import { dayRefusal, hasDayShape, rangeRefusal } from "../core/days.js";

export interface ConsoleCommand {
  name: string;
  usage: string;
  summary: string;
  /** Words completed after the command. */
  args: readonly string[];
}

export const CONSOLE_COMMANDS: readonly ConsoleCommand[] = [
  {
    name: "status",
    usage: "status",
    summary: "unit, VMC link, payment service, beacon, service mode, last vends, unresolved",
    args: [],
  },
  {
    name: "sales",
    usage: "sales [today|YYYY-MM-DD|--from DATE --to DATE]",
    summary: "vends captured: count and total per item and per day",
    args: ["today", "--from", "--to"],
  },
  {
    name: "journal",
    usage: "journal [recent|unresolved|SESSION]",
    summary: "latest sessions, sessions not settled, or one session's full event log",
    args: ["recent", "unresolved"],
  },
  {
    name: "screen",
    usage: "screen",
    summary: "what the unit's display shows now, as text (vendd screen --png for the picture)",
    args: [],
  },
  { name: "errors", usage: "errors", summary: "why out of service, recent warnings and faults", args: [] },
  {
    name: "config",
    usage: "config show|diff|set KEY VALUE|apply|discard",
    summary: "show; stage changes (checked), see them, apply (restart, rolled back if unhealthy)",
    args: ["show", "diff", "set", "apply", "discard"],
  },
  {
    name: "test-vend",
    usage: "test-vend [AMOUNT]",
    summary: "a real vend of the test amount: QR, payment, approval, recorded",
    args: [],
  },
  {
    name: "service",
    usage: "service in|out [REASON]",
    summary: "take the unit out of service (the display shows REASON) or back in",
    args: ["in", "out"],
  },
  {
    name: "logs",
    usage: "logs [--follow]",
    summary: "recent log lines; --follow until Enter",
    args: ["--follow"],
  },
  {
    name: "dex",
    usage: "dex read|last",
    summary: "read the machine's DEX audit now (out of service for seconds), or show the last read",
    args: ["read", "last"],
  },
  { name: "restart", usage: "restart", summary: "restart the daemon (the console reconnects)", args: [] },
  { name: "logout", usage: "logout", summary: "log out (Ctrl-D logs out too)", args: [] },
  { name: "help", usage: "help [COMMAND]", summary: "this list, or one command's usage", args: [] },
];

const NAMES = CONSOLE_COMMANDS.map((c) => c.name);

/** Config keys offered by tab completion after `config set` (the common ones). */
export const CONFIG_KEYS: readonly string[] = [
  "console.idleTimeoutMinutes",
  "console.testVendAmount",
  "console.testVendItem",
  "engine.maxPrice",
  "engine.paymentTimeoutMs",
  "engine.vendTimeoutMs",
  "logging.level",
  "unit.name",
];

export type Parsed =
  | { kind: "request"; cmd: string; args: Record<string, unknown>; follow?: boolean }
  | { kind: "local"; text: string }
  | { kind: "error"; text: string }
  | { kind: "empty" };

/** A typed line (already cleaned) as what to do. `today` is the local date. */
export function parseLine(line: string, today: string): Parsed {
  const words = line
    .trim()
    .split(/\s+/)
    .filter((w) => w !== "");
  const [cmd, ...rest] = words;
  if (cmd === undefined) return { kind: "empty" };
  const usage = (name: string): Parsed => ({
    kind: "error",
    text: `usage: ${CONSOLE_COMMANDS.find((c) => c.name === name)?.usage ?? name}`,
  });
  switch (cmd) {
    case "status":
    case "screen":
    case "errors":
    case "restart":
    case "logout":
      return rest.length === 0 ? { kind: "request", cmd, args: {} } : usage(cmd);
    case "help":
      return { kind: "local", text: helpText(rest[0]) };
    case "sales": {
      if (rest.length === 0 || (rest.length === 1 && rest[0] === "today"))
        return { kind: "request", cmd, args: { from: today, to: today } };
      if (rest.length === 1 && hasDayShape(rest[0] ?? "")) {
        const bad = dayRefusal("sales", rest[0] ?? "");
        if (bad !== null) return { kind: "error", text: bad };
        return { kind: "request", cmd, args: { from: rest[0], to: rest[0] } };
      }
      if (rest.length === 4 && rest[0] === "--from" && rest[2] === "--to") {
        const bad = rangeRefusal(rest[1] ?? "", rest[3] ?? "");
        if (bad !== null) return { kind: "error", text: bad };
        return { kind: "request", cmd, args: { from: rest[1], to: rest[3] } };
      }
      return usage(cmd);
    }
    case "journal": {
      if (rest.length === 0) return { kind: "request", cmd, args: { view: "recent" } };
      if (rest.length !== 1) return usage(cmd);
      const w = rest[0] ?? "";
      if (w === "recent" || w === "unresolved") return { kind: "request", cmd, args: { view: w } };
      return /^[A-Za-z0-9-]{1,64}$/.test(w)
        ? { kind: "request", cmd, args: { view: "session", session: w } }
        : usage(cmd);
    }
    case "config": {
      const [action, key, ...value] = rest;
      if (
        (action === "show" || action === "diff" || action === "apply" || action === "discard") &&
        key === undefined
      )
        return { kind: "request", cmd, args: { action } };
      if (action === "set" && key !== undefined && value.length > 0)
        return { kind: "request", cmd, args: { action, key, value: value.join(" ") } };
      return usage(cmd);
    }
    case "test-vend":
      if (rest.length === 0) return { kind: "request", cmd, args: {} };
      if (rest.length !== 1 || !/^\d{1,7}(\.\d{1,2})?$/.test(rest[0] ?? "")) return usage(cmd);
      if (!/[1-9]/.test(rest[0] ?? ""))
        return { kind: "error", text: "test-vend: the amount must be above 0" };
      return { kind: "request", cmd, args: { amount: rest[0] } };
    case "service": {
      const [mode, ...reason] = rest;
      if (mode === "in" && reason.length === 0) return { kind: "request", cmd, args: { mode } };
      if (mode === "out")
        return {
          kind: "request",
          cmd,
          args: reason.length === 0 ? { mode } : { mode, reason: reason.join(" ") },
        };
      return usage(cmd);
    }
    case "dex":
      return rest.length === 1 && (rest[0] === "read" || rest[0] === "last")
        ? { kind: "request", cmd, args: { action: rest[0] } }
        : usage(cmd);
    case "logs":
      if (rest.length === 0) return { kind: "request", cmd, args: {} };
      return rest.length === 1 && rest[0] === "--follow"
        ? { kind: "request", cmd, args: { follow: true }, follow: true }
        : usage(cmd);
    default:
      return { kind: "error", text: `unknown command: ${cmd.slice(0, 40)} (help lists them)` };
  }
}

export function helpText(name?: string): string {
  if (name !== undefined) {
    const c = CONSOLE_COMMANDS.find((x) => x.name === name);
    if (c === undefined) return `no command ${name.slice(0, 40)} (help lists them)`;
    return `${c.usage}\n  ${c.summary}`;
  }
  return CONSOLE_COMMANDS.map((c) => `${c.usage}\n    ${c.summary}`).join("\n");
}

/** readline completer: command names, then each command's argument words. */
export function complete(line: string): [string[], string] {
  const words = line.split(/\s+/);
  if (words.length <= 1) {
    const part = words[0] ?? "";
    return [NAMES.filter((n) => n.startsWith(part)), part];
  }
  const part = words.at(-1) ?? "";
  const cmd = CONSOLE_COMMANDS.find((c) => c.name === words[0]);
  if (cmd === undefined) return [[], part];
  let options: readonly string[] = words.length === 2 ? cmd.args : [];
  if (cmd.name === "config" && words[1] === "set" && words.length === 3) options = CONFIG_KEYS;
  if (cmd.name === "help" && words.length === 2) options = NAMES;
  return [options.filter((o) => o.startsWith(part)), part];
}

/** Cleans a typed line: escape sequences and control characters removed; null when too long. */
export function cleanLine(raw: string, max = 1024): string | null {
  if (raw.length > max) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  return raw.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "").replace(/[\u0000-\u001f\u007f-\u009f]/g, "");
}
