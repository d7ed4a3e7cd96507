/**
 * The daemon's control protocol: newline-delimited JSON over a Unix stream socket, one request and one
 * answer per line, versioned. The technician console, the update health gate and later tools talk to the
 * daemon only through it (nothing but the daemon opens the journal).
 *
 *   request  {"v":1,"id":N,"cmd":"status","args":{...}}
 *   answer   {"v":1,"id":N,"ok":true,"result":...}
 *            {"v":1,"id":N,"ok":false,"error":{"code":"...","message":"..."}}
 *   event    {"v":1,"event":"log","data":...}   (pushed by the daemon, e.g. `logs --follow`)
 *
 * Both directions are guarded: anything that is not a well-formed message of this version is rejected
 * with a specific ControlProtocolError, never passed on as `unknown`. A line longer than MAX_LINE_BYTES
 * is an error (the reader drops it without buffering more of it).
 *
 * This file is the protocol itself (messages, guards, encoding, line framing); controlClient.ts is the
 * client side, controlStatus.ts the `status` answer and its guard.
 */
import { dirname, join } from "node:path";

export const CONTROL_VERSION = 1;
/** Longest line either side sends or accepts, in bytes (without the newline). */
export const MAX_LINE_BYTES = 64 * 1024;
/** Default time a one-shot request waits for its answer, ms. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** File name of the control socket in the state directory. */
export const CONTROL_SOCKET_NAME = "control.sock";

/** Default control socket: next to the journal, in the state directory. */
export function defaultControlSocket(journalPath: string): string {
  return join(dirname(journalPath), CONTROL_SOCKET_NAME);
}

/** Error codes an answer may carry (unknown codes from a newer daemon are kept as "error"). */
export const CONTROL_ERROR_CODES = [
  /** The line is not JSON, not an object, or not a request of this version. */
  "badRequest",
  /** The line is longer than MAX_LINE_BYTES. */
  "lineTooLong",
  "unknownCommand",
  /** The arguments do not fit the command. */
  "badArgs",
  /** The command needs a login. */
  "loginRequired",
  /** A wrong PIN or an unknown badge. */
  "loginFailed",
  /** Too many failed logins: wait (`retryAt` in the message's details). */
  "lockedOut",
  /** Login is not configured (no PIN hash, no badge). */
  "loginUnavailable",
  /** The unit cannot do it now (e.g. a vend in progress, not in service). */
  "busy",
  /** The request was understood and refused (e.g. invalid config: the message lists every error). */
  "refused",
  /** Too many requests waiting for answers on this connection. */
  "tooManyPending",
  /** The daemon failed to carry the command out. */
  "failed",
  /** A code this client does not know. */
  "error",
] as const;
export type ControlErrorCode = (typeof CONTROL_ERROR_CODES)[number];

export interface ControlRequest {
  v: typeof CONTROL_VERSION;
  id: number;
  cmd: string;
  args: Record<string, unknown>;
}

export interface ControlErrorBody {
  code: ControlErrorCode;
  message: string;
  /** Machine-readable details (e.g. `{ retryAt }` for lockedOut, `{ errors }` for refused). */
  details?: Record<string, unknown>;
}

export type ControlAnswer =
  | { v: typeof CONTROL_VERSION; id: number; ok: true; result: unknown }
  | { v: typeof CONTROL_VERSION; id: number; ok: false; error: ControlErrorBody };

/** A message the daemon pushes without a request (log lines for `logs --follow`, logout on idle). */
export interface ControlEvent {
  v: typeof CONTROL_VERSION;
  event: string;
  data: unknown;
}

/** A malformed line or message (either direction). */
export class ControlProtocolError extends Error {
  constructor(
    readonly code: "badRequest" | "lineTooLong" | "badAnswer",
    message: string,
  ) {
    super(message);
    this.name = "ControlProtocolError";
  }
}

/** The daemon answered with ok:false. */
export class ControlError extends Error {
  readonly code: ControlErrorCode;
  readonly details: Record<string, unknown> | undefined;
  constructor(body: ControlErrorBody) {
    super(body.message);
    this.name = "ControlError";
    this.code = body.code;
    this.details = body.details;
  }
}

/** The socket could not be reached, closed before the answer, or the answer took too long. */
export class ControlConnectionError extends Error {
  constructor(
    readonly code: "unreachable" | "closed" | "timeout",
    message: string,
  ) {
    super(message);
    this.name = "ControlConnectionError";
  }
}

/** A JSON object (not null, not an array): the shape of every message and of `args`. */
export function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

const COMMAND = /^[a-z][a-z0-9-]{0,31}$/;

function validId(x: unknown): x is number {
  return typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
}

function parseLine(line: string): unknown {
  if (Buffer.byteLength(line, "utf8") > MAX_LINE_BYTES)
    throw new ControlProtocolError("lineTooLong", `line longer than ${MAX_LINE_BYTES} bytes`);
  try {
    return JSON.parse(line) as unknown;
  } catch {
    throw new ControlProtocolError("badRequest", "not JSON");
  }
}

/**
 * A request from one line (server side). Throws ControlProtocolError naming what is wrong; `requestIdOf`
 * gives the id to answer with when the line had a usable one (else the answer carries id 0).
 */
export function parseRequest(line: string): ControlRequest {
  const x = parseLine(line);
  if (!isRecord(x)) throw new ControlProtocolError("badRequest", "a request is a JSON object");
  if (x.v !== CONTROL_VERSION)
    throw new ControlProtocolError("badRequest", `unsupported protocol version (this daemon speaks v1)`);
  if (!validId(x.id)) throw new ControlProtocolError("badRequest", "id must be a non-negative integer");
  if (typeof x.cmd !== "string" || !COMMAND.test(x.cmd))
    throw new ControlProtocolError("badRequest", "cmd must be a command name");
  const args = x.args ?? {};
  if (!isRecord(args)) throw new ControlProtocolError("badRequest", "args must be an object");
  return { v: CONTROL_VERSION, id: x.id, cmd: x.cmd, args };
}

/** The id of a request line that failed to parse, when it has one (to answer with it), else 0. */
export function requestIdOf(line: string): number {
  try {
    const x: unknown = JSON.parse(line);
    return isRecord(x) && validId(x.id) ? x.id : 0;
  } catch {
    return 0;
  }
}

/** An answer or event from one line (client side). Throws ControlProtocolError on anything else. */
export function parseAnswer(line: string): ControlAnswer | ControlEvent {
  let x: unknown;
  try {
    x = parseLine(line);
  } catch (err) {
    throw new ControlProtocolError("badAnswer", (err as Error).message);
  }
  if (!isRecord(x) || x.v !== CONTROL_VERSION)
    throw new ControlProtocolError("badAnswer", "not a v1 control message");
  if (typeof x.event === "string") return { v: CONTROL_VERSION, event: x.event, data: x.data };
  if (!validId(x.id)) throw new ControlProtocolError("badAnswer", "answer without an id");
  if (x.ok === true) return { v: CONTROL_VERSION, id: x.id, ok: true, result: x.result };
  if (x.ok !== false || !isRecord(x.error))
    throw new ControlProtocolError("badAnswer", "answer is neither ok nor an error");
  const e = x.error;
  const code = (CONTROL_ERROR_CODES as readonly string[]).includes(String(e.code))
    ? (e.code as ControlErrorCode)
    : "error";
  const message = typeof e.message === "string" ? e.message : "error";
  const body: ControlErrorBody = { code, message };
  if (isRecord(e.details)) body.details = e.details;
  return { v: CONTROL_VERSION, id: x.id, ok: false, error: body };
}

export function encodeRequest(id: number, cmd: string, args: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ v: CONTROL_VERSION, id, cmd, args })}\n`;
}

export function encodeOk(id: number, result: unknown): string {
  return `${JSON.stringify({ v: CONTROL_VERSION, id, ok: true, result: result ?? null })}\n`;
}

export function encodeError(id: number, error: ControlErrorBody): string {
  return `${JSON.stringify({ v: CONTROL_VERSION, id, ok: false, error })}\n`;
}

export function encodeEvent(event: string, data: unknown): string {
  return `${JSON.stringify({ v: CONTROL_VERSION, event, data: data ?? null })}\n`;
}

/**
 * Splits a byte stream into lines of at most `max` bytes. A longer line is reported once through
 * `onTooLong` and its bytes are skipped up to the next newline (never buffered).
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onTooLong: () => void,
    private readonly max = MAX_LINE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (!this.skipping) {
        if (this.size + piece.length > this.max) {
          this.parts = [];
          this.size = 0;
          this.skipping = true;
          this.onTooLong();
        } else if (piece.length > 0) {
          this.parts.push(piece);
          this.size += piece.length;
        }
      }
      if (nl === -1) return;
      if (!this.skipping) {
        const line = Buffer.concat(this.parts, this.size).toString("utf8").replace(/\r$/, "");
        this.parts = [];
        this.size = 0;
        if (line.trim() !== "") this.onLine(line);
      }
      this.skipping = false;
      start = nl + 1;
    }
  }
}
