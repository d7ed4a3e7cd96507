import { EmulatorInputError } from "../errors.js";

export type FaultKind = "delay" | "hang" | "500" | "reset" | "lost" | "409";

/**
 * One scheduled fault on a route. The next `count` requests whose method and path match get it.
 * - `delay`: the answer comes `delayMs` (real ms) later; the request is applied.
 * - `hang`: no answer ever (the socket stays open until the client gives up or the emulator closes).
 * - `500`: answer `500` code `2001`.
 * - `reset`: the socket is destroyed with a TCP RST (`socket.resetAndDestroy()`), no answer.
 * - `lost`: the status line, headers and half of the body are sent, then the socket is destroyed.
 * - `409`: answer `409` (code `code`, default `1099`) without applying.
 * `applied` (default true, ignored by `delay` and `409`) says whether the request is applied before the fault.
 */
export interface FaultRule {
  /** HTTP method, or `*` (default) for any. */
  method?: string;
  /** Path pattern: `*` matches one segment, `**` any rest, e.g. `/v10/payments/*\/capture`. */
  path: string;
  fault: FaultKind;
  applied?: boolean;
  /** How many matching requests get the fault (default 1). */
  count?: number;
  /** Real ms for `delay` (default 1000). */
  delayMs?: number;
  /** Error code of a `409` fault's body (default `1099`). */
  code?: string;
}

/** A fault picked for one request. */
export interface FaultHit {
  fault: FaultKind;
  applied: boolean;
  delayMs: number;
  code: string;
}

interface Armed {
  rule: FaultRule;
  method: string;
  pattern: RegExp;
  remaining: number;
}

const KINDS: readonly FaultKind[] = ["delay", "hang", "500", "reset", "lost", "409"];

function compile(path: string): RegExp {
  const parts = path.split("/").map((seg) => {
    if (seg === "**") return ".*";
    if (seg === "*") return "[^/]+";
    return seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  });
  return new RegExp(`^${parts.join("/")}$`);
}

/** Reads a fault rule from untrusted JSON (admin API). */
export function parseFaultRule(value: unknown): FaultRule {
  if (typeof value !== "object" || value === null)
    throw new EmulatorInputError("fault rule must be an object");
  const v = value as Record<string, unknown>;
  const fault = v.fault;
  if (typeof fault !== "string" || !(KINDS as readonly string[]).includes(fault)) {
    throw new EmulatorInputError(`fault must be one of ${KINDS.join(", ")}`);
  }
  if (typeof v.path !== "string" || !v.path.startsWith("/"))
    throw new EmulatorInputError("path must start with /");
  const rule: FaultRule = { path: v.path, fault: fault as FaultKind };
  if (v.method !== undefined) {
    if (typeof v.method !== "string") throw new EmulatorInputError("method must be a string");
    rule.method = v.method;
  }
  if (v.applied !== undefined) {
    if (typeof v.applied !== "boolean") throw new EmulatorInputError("applied must be a boolean");
    rule.applied = v.applied;
  }
  for (const key of ["count", "delayMs"] as const) {
    const n = v[key];
    if (n === undefined) continue;
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
      throw new EmulatorInputError(`${key} must be an integer >= 0`);
    }
    rule[key] = n;
  }
  if (v.code !== undefined) {
    if (typeof v.code !== "string") throw new EmulatorInputError("code must be a string");
    rule.code = v.code;
  }
  return rule;
}

/** The armed fault rules, matched in the order they were added. */
export class FaultSchedule {
  private armed: Armed[] = [];

  add(rule: FaultRule): void {
    if (!(KINDS as readonly string[]).includes(rule.fault))
      throw new EmulatorInputError("unknown fault kind");
    const remaining = rule.count ?? 1;
    if (remaining <= 0) return;
    const method = (rule.method ?? "*").toUpperCase();
    this.armed.push({ rule, method, pattern: compile(rule.path), remaining });
  }

  clear(): void {
    this.armed = [];
  }

  /** Rules still armed, with their remaining counts. */
  list(): (FaultRule & { remaining: number })[] {
    return this.armed.map((a) => ({ ...a.rule, remaining: a.remaining }));
  }

  /** Takes one use of the first rule matching the request, if any. */
  take(method: string, path: string): FaultHit | null {
    if (this.armed.length === 0) return null;
    const index = this.armed.findIndex(
      (a) => (a.method === "*" || a.method === method) && a.pattern.test(path),
    );
    const hit = this.armed[index];
    if (!hit) return null;
    hit.remaining -= 1;
    if (hit.remaining <= 0) this.armed.splice(index, 1);
    return {
      fault: hit.rule.fault,
      applied: hit.rule.applied ?? true,
      delayMs: hit.rule.delayMs ?? 1000,
      code: hit.rule.code ?? "1099",
    };
  }
}
