/**
 * The daemon's control socket (issue 13): a Unix stream socket, mode 0600, speaking the v1 protocol of
 * src/core/control.ts. Each connection has its own login; every command but `login` and `help` needs one.
 * Every command a logged-in client runs, and every login attempt, is written to the hash-chained audit log
 * in the journal. Hostile clients change nothing: a bad line gets an error answer, an over-long line is
 * skipped unbuffered, a connection with too many requests waiting is answered `tooManyPending`, and one
 * that does not read its answers is dropped once they pile up.
 */
import { unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { Logger } from "pino";
import { type BadgeEntry, createBadgeCheck, normaliseUid } from "../../drivers/nfc/badges.js";
import type { Clock } from "../core/clock.js";
import {
  type ControlErrorCode,
  ControlProtocolError,
  encodeError,
  encodeEvent,
  encodeOk,
  LineSplitter,
  parseRequest,
  requestIdOf,
} from "../core/control.js";
import { type ParsedPinHash, verifyPin } from "../core/pin.js";
import { printable } from "../core/printable.js";
import type { ConsoleStore } from "../journal/consoleStore.js";
import { removeStaleSocket } from "./controlSocket.js";
import { lockedUntil } from "./lockout.js";

export { ControlSocketInUse } from "./controlSocket.js";

/** Requests waiting for their answer on one connection before new ones are refused. */
export const MAX_PENDING = 16;
/** Bytes of answers a client may leave unread before it is dropped. */
export const MAX_UNREAD_BYTES = 1024 * 1024;
export const MAX_CONNECTIONS = 16;
/** Bad lines logged per connection (the rest are counted, and summed up when it closes). */
const LOGGED_BAD_LINES = 3;
/** A login is answered no sooner than this after it arrived, right or wrong, ms. */
export const LOGIN_MIN_MS = 750;

/** A login while the running config has neither a PIN nor a badge. */
export const NO_LOGIN =
  "no console PIN (console.pinHash) and no badges (nfc.badges) in the running configuration: add one (docs/technicians.md), then systemctl reload vendd";

/** A refusal a command handler throws: answered with its code and message. */
export class CommandError extends Error {
  constructor(
    readonly code: ControlErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "CommandError";
  }
}

/** One connection's state, as command handlers see it. */
export interface ControlSession {
  readonly id: number;
  /** Who is logged in (`PIN`, `badge <name>`), or null. */
  who: string | null;
  /** Per-connection scratch space of the command handlers (the staged config). */
  readonly data: Map<string, unknown>;
  /** Pushes an event to this client (log lines of `logs --follow`, progress of a test vend). */
  push(event: string, data: unknown): void;
  /** Called when the connection closes (stop a follow). */
  onClose(fn: () => void): void;
}

export interface CommandSpec {
  run(args: Record<string, unknown>, session: ControlSession): Promise<unknown> | unknown;
  /** The command as the audit log records it (never a secret); default the command name. */
  audit?(args: Record<string, unknown>): string;
  /** Runs without a login (`help`). */
  public?: boolean;
  /** Leaves no audit row. */
  unaudited?: boolean;
  /** Runs at once, beside the command the connection is running (`cancel` of a test vend). */
  immediate?: boolean;
}

export interface ControlServerOptions {
  path: string;
  clock: Clock;
  logger: Logger;
  store: ConsoleStore;
  pinHash: ParsedPinHash | null;
  badges: readonly BadgeEntry[];
  /** Idle time after which a connection is logged out, ms. */
  idleMs: number;
  commands: ReadonlyMap<string, CommandSpec>;
  /**
   * What a login without a PIN or badge in the running config is told (default NO_LOGIN): the unit says
   * whether its config file already holds one the daemon has not read.
   */
  loginUnavailable?: () => string;
  /** Minimum time of a login answer, ms (default LOGIN_MIN_MS); waited in real time. */
  loginMinMs?: number;
}

interface Connection extends ControlSession {
  socket: Socket;
  queue: string[];
  busy: boolean;
  lastActivity: number;
  badLines: number;
  closers: (() => void)[];
}

export class ControlServer {
  private readonly connections = new Set<Connection>();
  private nextId = 1;
  private badgeCheck: ((uid: string) => Promise<string | null>) | null;
  private pinHash: ParsedPinHash | null;

  private constructor(
    private readonly server: Server,
    private readonly opts: ControlServerOptions,
  ) {
    this.badgeCheck = opts.badges.length > 0 ? createBadgeCheck(opts.badges) : null;
    this.pinHash = opts.pinHash;
    server.on("connection", (socket) => this.accept(socket));
    server.on("error", (err) => opts.logger.error({ err }, "control socket error"));
  }

  /**
   * Listens on `opts.path` (mode 0600). A stale socket file left by a daemon that died is removed (the
   * journal lock already guarantees that no other daemon runs); any other file there is refused.
   */
  static async start(opts: ControlServerOptions): Promise<ControlServer> {
    await removeStaleSocket(opts.path);
    const server = createServer({ allowHalfOpen: false });
    const control = new ControlServer(server, opts);
    const mask = process.umask(0o177);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(opts.path, () => {
          server.off("error", reject);
          resolve();
        });
      });
    } finally {
      process.umask(mask);
    }
    opts.logger.info({ socket: opts.path }, "control socket listening");
    return control;
  }

  /**
   * The login's PIN hash and badges from a reloaded config (SIGHUP): the next login checks them; a
   * session already logged in stays logged in.
   */
  setLogin(pinHash: ParsedPinHash | null, badges: readonly BadgeEntry[]): void {
    this.pinHash = pinHash;
    this.badgeCheck = badges.length > 0 ? createBadgeCheck(badges) : null;
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    try {
      unlinkSync(this.opts.path);
    } catch {
      // Already gone (closing the server may remove it).
    }
  }

  private accept(socket: Socket): void {
    const logger = this.opts.logger;
    if (this.connections.size >= MAX_CONNECTIONS) {
      logger.warn("control socket: too many connections, one refused");
      socket.end(encodeError(0, { code: "busy", message: "too many connections" }));
      socket.destroy();
      return;
    }
    const c: Connection = {
      id: this.nextId++,
      who: null,
      data: new Map(),
      socket,
      queue: [],
      busy: false,
      lastActivity: this.opts.clock.now(),
      badLines: 0,
      closers: [],
      push: (event, data) => this.send(c, encodeEvent(event, data)),
      onClose: (fn) => c.closers.push(fn),
    };
    this.connections.add(c);
    const splitter = new LineSplitter(
      (line) => this.onLine(c, line),
      () => this.bad(c, 0, new ControlProtocolError("lineTooLong", "line longer than 64 KiB")),
    );
    socket.on("data", (chunk: Buffer) => splitter.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => {
      this.connections.delete(c);
      for (const f of c.closers) f();
      if (c.badLines > LOGGED_BAD_LINES)
        logger.warn({ connection: c.id, badLines: c.badLines }, "control socket: connection sent bad lines");
    });
  }

  private send(c: Connection, text: string): void {
    if (c.socket.destroyed) return;
    c.socket.write(text);
    if (c.socket.writableLength > MAX_UNREAD_BYTES) {
      this.opts.logger.warn(
        { connection: c.id },
        "control socket: client does not read its answers, dropped",
      );
      c.socket.destroy();
    }
  }

  private bad(c: Connection, id: number, err: ControlProtocolError): void {
    c.badLines++;
    if (c.badLines <= LOGGED_BAD_LINES)
      this.opts.logger.warn({ connection: c.id, problem: err.message }, "control socket: bad request");
    const code = err.code === "lineTooLong" ? "lineTooLong" : "badRequest";
    this.send(c, encodeError(id, { code, message: err.message }));
  }

  private onLine(c: Connection, line: string): void {
    if (this.isImmediate(line)) return void this.handle(c, line);
    if (c.queue.length >= MAX_PENDING) {
      this.send(
        c,
        encodeError(requestIdOf(line), { code: "tooManyPending", message: "too many requests waiting" }),
      );
      return;
    }
    c.queue.push(line);
    void this.drain(c);
  }

  private isImmediate(line: string): boolean {
    try {
      return this.opts.commands.get(parseRequest(line).cmd)?.immediate === true;
    } catch {
      return false;
    }
  }

  /** Requests of one connection run one at a time, in order (but `immediate` ones). */
  private async drain(c: Connection): Promise<void> {
    if (c.busy) return;
    c.busy = true;
    try {
      for (let line = c.queue.shift(); line !== undefined; line = c.queue.shift()) {
        if (c.socket.destroyed) return;
        await this.handle(c, line);
      }
    } finally {
      c.busy = false;
    }
  }

  private async handle(c: Connection, line: string): Promise<void> {
    let req: ReturnType<typeof parseRequest>;
    try {
      req = parseRequest(line);
    } catch (err) {
      if (!(err instanceof ControlProtocolError)) throw err;
      this.bad(c, requestIdOf(line), err);
      return;
    }
    const { clock, logger } = this.opts;
    const now = clock.now();
    if (c.who !== null && now - c.lastActivity > this.opts.idleMs) {
      this.audit(c.who, "logout", "idle timeout");
      c.who = null;
    }
    c.lastActivity = now;
    if (req.cmd === "login") {
      this.send(c, await this.login(c, req.id, req.args));
      return;
    }
    const spec = this.opts.commands.get(req.cmd);
    if (spec === undefined) {
      if (c.who !== null) this.audit(c.who, printable(req.cmd, 60), "unknownCommand");
      this.send(c, encodeError(req.id, { code: "unknownCommand", message: `unknown command ${req.cmd}` }));
      return;
    }
    if (!spec.public && c.who === null) {
      this.send(c, encodeError(req.id, { code: "loginRequired", message: "log in first" }));
      return;
    }
    const who = c.who ?? "-";
    let summary: string;
    try {
      summary = printable(spec.audit?.(req.args) ?? req.cmd, 200);
    } catch {
      summary = req.cmd;
    }
    // Anonymous use of a public command (the health gate's `status`) is not audited: it polls.
    const audited = !spec.unaudited && c.who !== null;
    try {
      const result = await spec.run(req.args, c);
      if (audited) this.audit(who, summary, "ok");
      this.send(c, encodeOk(req.id, result));
    } catch (err) {
      const e =
        err instanceof CommandError
          ? err
          : new CommandError(
              "failed",
              `${req.cmd} failed: ${printable((err as Error).message ?? String(err))}`,
            );
      if (!(err instanceof CommandError)) logger.error({ err, cmd: req.cmd }, "control command failed");
      if (audited) this.audit(who, summary, `${e.code}: ${printable(e.message, 120)}`);
      this.send(
        c,
        encodeError(req.id, {
          code: e.code,
          message: e.message,
          ...(e.details === undefined ? {} : { details: e.details }),
        }),
      );
    }
  }

  /** Writes an audit row; a journal that cannot be written is logged (the command already ran). */
  private audit(who: string, command: string, outcome: string): void {
    try {
      this.opts.store.audit(who, command, outcome);
    } catch (err) {
      this.opts.logger.error({ err }, "audit log write failed");
    }
  }

  /**
   * Login by PIN or badge UID. The attempt is committed to the journal (pending) before the secret is
   * checked and judged after, so a restart mid-check still counts it; the answer comes no sooner than
   * LOGIN_MIN_MS after the request, right or wrong.
   */
  private async login(c: Connection, id: number, args: Record<string, unknown>): Promise<string> {
    const { clock, store, logger } = this.opts;
    const started = Date.now();
    const answer = async (text: string) => {
      const wait = (this.opts.loginMinMs ?? LOGIN_MIN_MS) - (Date.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      return text;
    };
    const secret = args.secret;
    if (typeof secret !== "string" || secret.length === 0 || secret.length > 64)
      return answer(encodeError(id, { code: "badArgs", message: "login needs a PIN or a badge UID" }));
    if (this.pinHash === null && this.badgeCheck === null)
      return answer(
        encodeError(id, {
          code: "loginUnavailable",
          message: this.opts.loginUnavailable?.() ?? NO_LOGIN,
        }),
      );
    let until: number | null;
    let attempt: number;
    try {
      until = lockedUntil(store.attemptsSinceSuccess(), clock.now());
      if (until !== null) {
        this.audit("-", "login", "locked out");
        const seconds = Math.ceil((until - clock.now()) / 1000);
        return answer(
          encodeError(id, {
            code: "lockedOut",
            message: `too many failed logins: try again in ${seconds} s`,
            details: { retryAt: until },
          }),
        );
      }
      attempt = store.recordAttempt(
        typeof args.method === "string" && args.method === "badge" ? "badge" : "pin",
      );
    } catch (err) {
      logger.error({ err }, "login attempt could not be recorded: login refused");
      return answer(encodeError(id, { code: "failed", message: "the journal cannot record the attempt" }));
    }
    let who: string | null = null;
    const pinHash = this.pinHash;
    const pinOk = pinHash === null ? false : await verifyPin(secret, pinHash);
    if (pinOk) who = "PIN";
    if (this.badgeCheck !== null && normaliseUid(secret) !== null) {
      const name = await this.badgeCheck(secret);
      if (who === null && name !== null) who = `badge ${name}`;
    }
    try {
      store.judgeAttempt(attempt, who !== null);
    } catch (err) {
      logger.error({ err }, "login attempt could not be judged");
    }
    if (who === null) {
      this.audit("-", "login", "failed");
      logger.warn({ connection: c.id }, "console login failed");
      const next = lockedUntil(store.attemptsSinceSuccess(), clock.now());
      return answer(
        encodeError(id, {
          code: "loginFailed",
          message:
            next === null
              ? "wrong PIN or unknown badge"
              : `wrong PIN or unknown badge; locked for ${Math.ceil((next - clock.now()) / 1000)} s`,
          ...(next === null ? {} : { details: { retryAt: next } }),
        }),
      );
    }
    c.who = who;
    c.lastActivity = clock.now();
    this.audit(who, "login", "ok");
    logger.info({ connection: c.id, who }, "console login");
    return answer(encodeOk(id, { who, idleTimeoutMs: this.opts.idleMs }));
  }
}
