import type { BindingInterface } from "@serialport/bindings-cpp";
import type { Logger } from "pino";
import type { Clock } from "../../../src/core/clock.js";
import type { LineDialect } from "./messages.js";

/** Options of `createAdapterController`. All durations are milliseconds. */
export interface AdapterControllerOptions {
  /** Serial device, e.g. `/dev/serial/by-id/usb-…` or `/dev/ttyACM0`. */
  path: string;
  /** Default 115200 (vending-mdb §2.1). */
  baudRate?: number;
  currencyCode: "DKK" | "EUR";
  /**
   * Decimal places of amounts on the wire: the currency's (amounts on the adapter line are already scaled
   * to currency units, vending-mdb §2), so that a parsed amount is in the engine's minor units. Default 2.
   */
  decimals?: number;
  /** Wait for a command's confirmation line; default 2000, at least 1. */
  commandTimeoutMs?: number;
  /** Silence (no `r,ACK`) after which the link is reported down; default 5000, at least 1. */
  linkTimeoutMs?: number;
  clock: Clock;
  /** Receives protocol logs (no secrets pass through this driver). Silent when absent. */
  logger?: Logger;
  /** Serialport binding; the platform's own when absent (the mock binding in byte-level tests). */
  binding?: BindingInterface;
  /** Selection first / "always idle" (`mdb-always-idle=1`); default true. */
  alwaysIdle?: boolean;
  /** Longer lines are discarded and logged; default 256 bytes. */
  maxLineBytes?: number;
  /** First delay before reopening a lost port; doubles per failed attempt. Default 250. */
  reopenMinMs?: number;
  /** Cap of the reopen delay. Default 10000. */
  reopenMaxMs?: number;
  /** Interval of the check that the device node still exists (unplug detection); default 500. */
  presenceCheckMs?: number;
  /**
   * Minimum time between two reads that follow data; bounds the read rate under the `r,ACK` flood at the
   * cost of up to this much latency on lines that follow other lines. Default 50; 0 disables pacing.
   */
  readPacingMs?: number;
  /** Line dialect; default the cashless adapter protocol (vending-mdb §2). */
  dialect?: LineDialect;
}

export interface ResolvedOptions {
  path: string;
  baudRate: number;
  currencyCode: "DKK" | "EUR";
  decimals: number;
  commandTimeoutMs: number;
  linkTimeoutMs: number;
  alwaysIdle: boolean;
  maxLineBytes: number;
  reopenMinMs: number;
  reopenMaxMs: number;
  presenceCheckMs: number;
  readPacingMs: number;
}

function atLeast(value: number | undefined, fallback: number, min: number, name: string): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v < min) throw new RangeError(`${name} must be a number >= ${min}`);
  return v;
}

/** Applies defaults and bounds; throws `RangeError` for values out of range. */
export function resolveOptions(o: AdapterControllerOptions): ResolvedOptions {
  const reopenMinMs = atLeast(o.reopenMinMs, 250, 1, "reopenMinMs");
  return {
    path: o.path,
    baudRate: atLeast(o.baudRate, 115_200, 1, "baudRate"),
    currencyCode: o.currencyCode,
    decimals: atLeast(o.decimals, 2, 0, "decimals"),
    commandTimeoutMs: atLeast(o.commandTimeoutMs, 2000, 1, "commandTimeoutMs"),
    linkTimeoutMs: atLeast(o.linkTimeoutMs, 5000, 1, "linkTimeoutMs"),
    alwaysIdle: o.alwaysIdle ?? true,
    maxLineBytes: atLeast(o.maxLineBytes, 256, 16, "maxLineBytes"),
    reopenMinMs,
    reopenMaxMs: atLeast(o.reopenMaxMs, 10_000, reopenMinMs, "reopenMaxMs"),
    presenceCheckMs: atLeast(o.presenceCheckMs, 500, 10, "presenceCheckMs"),
    readPacingMs: atLeast(o.readPacingMs, 50, 0, "readPacingMs"),
  };
}
