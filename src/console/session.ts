/**
 * `vendd console`: the technician's session on a serial terminal. node:readline gives line editing,
 * history and tab completion; the PIN is read with echo off (and never enters the history). The console
 * talks to the daemon only over the control socket; the login lives on that connection, so a lost
 * connection (daemon restart) means logging in again. Idle time logs out; Ctrl-C clears the line (and
 * cancels a running test vend); Ctrl-D logs out and ends the session (systemd starts a fresh one on the
 * port). Answers are cut to the terminal's width (80 columns when it does not say), messages and errors
 * wrap; a daemon that cannot be reached is said at once, before the PIN prompt. Every line typed once
 * logged in reaches the daemon's audit log, `help` and refused lines too.
 */
import { ControlConnectionError, ControlError } from "../core/control.js";
import { ControlClient } from "../core/controlClient.js";
import { localDay } from "../core/days.js";
import { printable } from "../core/printable.js";
import { cleanLine, parseLine } from "./commands.js";
import { render } from "./render.js";
import { Terminal } from "./terminal.js";

export interface ConsoleOptions {
  socket: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Idle logout, ms (the daemon logs an idle connection out too). */
  idleMs?: number;
  /** Whether the input is a terminal (default: input.isTTY). */
  terminal?: boolean;
}

/** Lines that may wait while a command runs; more are dropped (a paste or a flood changes nothing). */
const MAX_QUEUED = 8;

/** One session's state: the connection and its login, the follow, the queue of typed lines. */
class ConsoleSession {
  private readonly term: Terminal;
  private client: ControlClient | null = null;
  private loggedIn = false;
  private following = false;
  closed = false;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly idleMs: number;
  private readonly queue: string[] = [];
  private dropped = 0;
  private working = false;
  /** The command waiting for its answer (Ctrl-C cancels a `test-vend`). */
  private running: string | null = null;
  private drained: Promise<void> = Promise.resolve();

  constructor(private readonly opts: ConsoleOptions) {
    const terminal = opts.terminal ?? (opts.input as { isTTY?: boolean }).isTTY === true;
    this.term = new Terminal(opts.output, opts.input, terminal);
    this.idleMs = opts.idleMs ?? 300_000;
  }

  get rl() {
    return this.term.rl;
  }

  /** An answer (tables): each line cut to the terminal's width. */
  private say(text: string): void {
    this.term.say(text);
  }

  /** A message or an error: wrapped to the terminal's width, never cut. */
  private tell(text: string): void {
    this.term.tell(text);
  }

  prompt(): void {
    if (this.closed) return;
    this.term.prompt(this.loggedIn);
  }

  private connecting: Promise<ControlClient | null> | null = null;

  /** The connection (made once, shared by whoever asks while it is being made), or null: said why. */
  private connect(): Promise<ControlClient | null> {
    if (this.client !== null && !this.client.isClosed) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async open(): Promise<ControlClient | null> {
    try {
      const c = await ControlClient.connect(this.opts.socket, { timeoutMs: 5000 });
      c.onEvent((e) => {
        if (e.event === "log" && this.following) this.say(printable(String(e.data), this.term.columns() - 2));
        else if (e.event === "progress") this.say(printable(String(e.data), this.term.columns() - 2));
      });
      c.onClose(() => {
        if (this.loggedIn) {
          this.loggedIn = false;
          this.following = false;
          this.term.muted = false;
          this.term.write("\r\n");
          this.tell("connection to the daemon lost: log in again");
          this.prompt();
        }
      });
      this.client = c;
      return c;
    } catch (err) {
      this.tell(unreachable(err, this.opts.socket));
      return null;
    }
  }

  private resetIdle(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (!this.loggedIn) return;
    this.idleTimer = setTimeout(() => {
      if (!this.loggedIn) return;
      this.loggedIn = false;
      this.following = false;
      void this.client?.request("logout").catch(() => {});
      this.say("\r\nlogged out after idle time");
      this.prompt();
    }, this.idleMs);
    this.idleTimer.unref?.();
  }

  private async login(secret: string): Promise<void> {
    this.term.muted = false;
    this.term.write("\r\n");
    const c = await this.connect();
    if (c === null) return;
    try {
      await c.request("login", { secret }, { timeoutMs: 30_000 });
      this.loggedIn = true;
      this.resetIdle();
      this.say("logged in (help lists the commands)");
    } catch (err) {
      this.tell(err instanceof ControlError ? printable(err.message, 1000) : "login failed: no answer");
    }
  }

  /** `help` and refused lines are answered here; the daemon's `help` puts them in the audit log. */
  private async auditLocal(line: string, help: boolean): Promise<void> {
    const c = this.client;
    if (c === null || c.isClosed) return;
    const topic = line.trim().split(/\s+/)[1];
    const args = help
      ? topic === undefined
        ? {}
        : { topic: topic.slice(0, 40) }
      : { refused: line.trim().slice(0, 80) };
    await c.request("help", args, { timeoutMs: 5000 }).catch(() => {});
  }

  private cancelTestVend(c: ControlClient): void {
    this.term.write("^C\r\n");
    c.request("cancel", {}, { timeoutMs: 5000 }).then(
      (r) => this.say(render("cancel", r)),
      (err: unknown) =>
        this.tell(`cancel: ${err instanceof ControlError ? printable(err.message, 1000) : "no answer"}`),
    );
  }

  private async stopFollow(): Promise<void> {
    this.following = false;
    await this.client?.request("logs", { follow: false }).catch(() => {});
  }

  private async run(line: string): Promise<void> {
    if (this.following) {
      await this.stopFollow();
      return;
    }
    if (!this.loggedIn) {
      const secret = line.trim();
      if (secret === "") return;
      await this.login(secret);
      return;
    }
    this.resetIdle();
    const parsed = parseLine(line, localDay(Date.now()));
    if (parsed.kind === "empty") return;
    if (parsed.kind !== "request") {
      this.say(parsed.text);
      await this.auditLocal(line, parsed.kind === "local");
      return;
    }
    const c = await this.connect();
    if (c === null) return;
    await this.request(c, parsed.cmd, parsed.args, parsed.follow);
  }

  /** One command to the daemon and its answer (or its refusal) on the terminal. */
  private async request(
    c: ControlClient,
    cmd: string,
    args: Record<string, unknown>,
    follow: boolean | undefined,
  ): Promise<void> {
    try {
      this.running = cmd;
      const result = await c
        .request(cmd, args, {
          timeoutMs: cmd === "test-vend" ? 30 * 60_000 : 30_000,
        })
        .finally(() => {
          this.running = null;
        });
      this.say(render(cmd, result));
      if (cmd === "logout") this.loggedIn = false;
      if (follow) {
        this.following = true;
        this.say("(following; press Enter to stop)");
      }
    } catch (err) {
      if (err instanceof ControlError) {
        if (err.code === "loginRequired") this.loggedIn = false;
        this.tell(
          err.message
            .split("\n")
            .slice(0, 60)
            .map((l) => printable(l, 1000))
            .join("\n"),
        );
      } else this.tell(`no answer: ${printable((err as Error).message, 1000)}`);
    }
  }

  private async pump(): Promise<void> {
    if (this.working) return this.drained;
    this.working = true;
    try {
      for (let line = this.queue.shift(); line !== undefined; line = this.queue.shift()) {
        await this.run(line);
        if (this.dropped > 0 && this.queue.length === 0) {
          this.term.muted = false;
          this.say(`(${this.dropped} lines typed while busy were dropped)`);
          this.dropped = 0;
        }
        if (!this.following) this.prompt();
      }
    } finally {
      this.working = false;
    }
  }

  /** A line typed (or pasted). */
  onLine(raw: string): void {
    if (this.closed) return;
    const wasLogin = !this.loggedIn;
    if (wasLogin) {
      // The PIN never enters the history.
      this.term.forgetHistory();
    }
    const line = cleanLine(raw);
    if (line === null) {
      this.term.muted = false;
      this.say("line too long: ignored");
      if (!this.working) this.prompt();
      return;
    }
    if (this.queue.length >= MAX_QUEUED) {
      // A paste or a flood while busy: dropped, and not echoed (a serial line is slow).
      this.dropped++;
      this.term.muted = true;
      return;
    }
    this.queue.push(line);
    this.drained = this.pump();
  }

  /** Ctrl-C: clear the line (and stop a follow). */
  onInterrupt(): void {
    this.rl.write(null, { ctrl: true, name: "u" });
    if (this.running === "test-vend" && this.client !== null && !this.client.isClosed)
      this.cancelTestVend(this.client);
    else if (this.following) void this.stopFollow().then(() => this.prompt());
    else {
      this.term.write("^C\r\n");
      this.prompt();
    }
  }

  /** Input ended (Ctrl-D, or the end of piped input): what was typed runs first, then log out and end. */
  async end(): Promise<void> {
    this.closed = true;
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    const c = this.client;
    await this.drained;
    // Logged out first: closing the connection below is the end, not a lost daemon.
    const wasIn = this.loggedIn;
    this.loggedIn = false;
    this.following = false;
    if (wasIn && c !== null) await c.request("logout", {}, { timeoutMs: 2000 }).catch(() => {});
    c?.close();
    this.term.muted = false;
    this.term.write("\r\nbye\r\n");
  }

  /** The banner; a daemon that cannot be reached is said before the PIN prompt, not after a PIN. */
  async greet(): Promise<void> {
    this.say("vendd technician console");
    await this.connect();
    if (!this.working) this.prompt();
  }
}

/** Runs one console session; resolves with the exit code when the technician ends it (Ctrl-D). */
export async function runConsole(opts: ConsoleOptions): Promise<number> {
  const session = new ConsoleSession(opts);
  return new Promise<number>((resolve) => {
    session.rl.on("line", (raw: string) => session.onLine(raw));
    session.rl.on("SIGINT", () => session.onInterrupt());
    session.rl.on("close", () => {
      if (session.closed) return;
      void session.end().then(() => resolve(0));
    });
    void session.greet();
  });
}

/** Why the daemon cannot be reached, once, and the next step. */
function unreachable(err: unknown, socket: string): string {
  const code = err instanceof ControlConnectionError ? /: (E[A-Z]+)$/.exec(err.message)?.[1] : undefined;
  const where = `cannot reach the daemon at ${printable(socket, 300)}`;
  if (code === "EACCES" || code === "EPERM")
    return `${where}: permission denied (the socket is the service user's, mode 0600): run the console as that user (vendd-console@.service does)`;
  const why =
    code === "ENOENT"
      ? "no control socket there"
      : code === "ECONNREFUSED"
        ? "nothing is listening on it"
        : code !== undefined
          ? code
          : err instanceof ControlConnectionError && err.code === "timeout"
            ? "no answer in 5 s"
            : printable(err instanceof Error ? err.message : String(err), 300);
  return `${where} (${why}): is vendd running? systemctl status vendd`;
}
