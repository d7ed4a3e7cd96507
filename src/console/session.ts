/**
 * `vendd console`: the technician's session on a serial terminal. node:readline gives line editing,
 * history and tab completion; the PIN is read with echo off (and never enters the history). The console
 * talks to the daemon only over the control socket; the login lives on that connection, so a lost
 * connection (daemon restart) means logging in again. Idle time logs out; Ctrl-C clears the line (and
 * cancels a running test vend); Ctrl-D logs out and ends the session (systemd starts a fresh one on the
 * port). Lines are cut to the terminal's width (80 columns when it does not say). Every line typed once
 * logged in reaches the daemon's audit log, `help` and refused lines too.
 */
import { createInterface, type Interface } from "node:readline";
import { Writable } from "node:stream";
import { ControlError } from "../core/control.js";
import { ControlClient } from "../core/controlClient.js";
import { localDay } from "../core/days.js";
import { printable } from "../core/printable.js";
import { cleanLine, complete, parseLine } from "./commands.js";
import { fitWidth, render, WIDTH } from "./render.js";

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

/** Runs one console session; resolves with the exit code when the technician ends it (Ctrl-D). */
export async function runConsole(opts: ConsoleOptions): Promise<number> {
  let muted = false;
  // A terminal that goes away (hangup, closed pipe) ends the session, it does not crash it.
  (opts.output as NodeJS.WritableStream & { on?: (e: string, f: () => void) => void }).on?.(
    "error",
    () => {},
  );
  const out = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      if (!muted) opts.output.write(chunk);
      cb();
    },
  });
  const columns = () => {
    const c = (opts.output as { columns?: unknown }).columns;
    return typeof c === "number" && Number.isSafeInteger(c) && c >= 40 ? Math.min(c, 500) : WIDTH;
  };
  const say = (text: string) => opts.output.write(`${fitWidth(text, columns()).replace(/\n/g, "\r\n")}\r\n`);
  const terminal = opts.terminal ?? (opts.input as { isTTY?: boolean }).isTTY === true;
  const rl: Interface = createInterface({
    input: opts.input,
    output: out,
    terminal,
    historySize: 100,
    completer: (line: string) => complete(line),
  });
  let client: ControlClient | null = null;
  let loggedIn = false;
  let following = false;
  let closed = false;
  let idleTimer: ReturnType<typeof setTimeout> | null = null;
  const idleMs = opts.idleMs ?? 300_000;
  const queue: string[] = [];
  let dropped = 0;
  let working = false;
  /** The command waiting for its answer (Ctrl-C cancels a `test-vend`). */
  let running: string | null = null;

  const prompt = () => {
    if (closed) return;
    if (loggedIn) {
      muted = false;
      rl.setPrompt("vendd> ");
      rl.prompt();
    } else {
      muted = false;
      rl.setPrompt("");
      opts.output.write("PIN or badge: ");
      muted = true;
      rl.prompt();
    }
  };

  const connect = async (): Promise<ControlClient | null> => {
    if (client !== null && !client.isClosed) return client;
    try {
      const c = await ControlClient.connect(opts.socket, { timeoutMs: 5000 });
      c.onEvent((e) => {
        if (e.event === "log" && following) say(printable(String(e.data), columns() - 2));
        else if (e.event === "progress") say(printable(String(e.data), columns() - 2));
      });
      c.onClose(() => {
        if (loggedIn) {
          loggedIn = false;
          following = false;
          muted = false;
          say("\r\nconnection to the daemon lost: log in again");
          prompt();
        }
      });
      client = c;
      return c;
    } catch (err) {
      say(`cannot reach the daemon: ${printable((err as Error).message, 70)}`);
      return null;
    }
  };

  const resetIdle = () => {
    if (idleTimer !== null) clearTimeout(idleTimer);
    idleTimer = null;
    if (!loggedIn) return;
    idleTimer = setTimeout(() => {
      if (!loggedIn) return;
      loggedIn = false;
      following = false;
      void client?.request("logout").catch(() => {});
      say("\r\nlogged out after idle time");
      prompt();
    }, idleMs);
    idleTimer.unref?.();
  };

  const login = async (secret: string) => {
    muted = false;
    opts.output.write("\r\n");
    const c = await connect();
    if (c === null) return;
    try {
      await c.request("login", { secret }, { timeoutMs: 30_000 });
      loggedIn = true;
      resetIdle();
      say("logged in (help lists the commands)");
    } catch (err) {
      say(err instanceof ControlError ? printable(err.message, 78) : "login failed: no answer");
    }
  };

  /** `help` and refused lines are answered here; the daemon's `help` puts them in the audit log. */
  const auditLocal = async (line: string, help: boolean) => {
    const c = client;
    if (c === null || c.isClosed) return;
    const topic = line.trim().split(/\s+/)[1];
    const args = help
      ? topic === undefined
        ? {}
        : { topic: topic.slice(0, 40) }
      : { refused: line.trim().slice(0, 80) };
    await c.request("help", args, { timeoutMs: 5000 }).catch(() => {});
  };

  const cancelTestVend = (c: ControlClient) => {
    opts.output.write("^C\r\n");
    c.request("cancel", {}, { timeoutMs: 5000 }).then(
      (r) => say(render("cancel", r)),
      (err: unknown) =>
        say(`cancel: ${err instanceof ControlError ? printable(err.message, 70) : "no answer"}`),
    );
  };

  const stopFollow = async () => {
    following = false;
    await client?.request("logs", { follow: false }).catch(() => {});
  };

  const run = async (line: string) => {
    if (following) {
      await stopFollow();
      return;
    }
    if (!loggedIn) {
      const secret = line.trim();
      if (secret === "") return;
      await login(secret);
      return;
    }
    resetIdle();
    const parsed = parseLine(line, localDay(Date.now()));
    if (parsed.kind === "empty") return;
    if (parsed.kind !== "request") {
      say(parsed.text);
      await auditLocal(line, parsed.kind === "local");
      return;
    }
    const c = await connect();
    if (c === null) return;
    try {
      running = parsed.cmd;
      const result = await c
        .request(parsed.cmd, parsed.args, {
          timeoutMs: parsed.cmd === "test-vend" ? 30 * 60_000 : 30_000,
        })
        .finally(() => {
          running = null;
        });
      say(render(parsed.cmd, result));
      if (parsed.cmd === "logout") loggedIn = false;
      if (parsed.follow) {
        following = true;
        say("(following; press Enter to stop)");
      }
    } catch (err) {
      if (err instanceof ControlError) {
        if (err.code === "loginRequired") loggedIn = false;
        say(
          err.message
            .split("\n")
            .slice(0, 60)
            .map((l) => printable(l, 200))
            .join("\n"),
        );
      } else say(`no answer: ${printable((err as Error).message, 70)}`);
    }
  };

  let drained: Promise<void> = Promise.resolve();
  const pump = async () => {
    if (working) return drained;
    working = true;
    try {
      for (let line = queue.shift(); line !== undefined; line = queue.shift()) {
        await run(line);
        if (dropped > 0 && queue.length === 0) {
          muted = false;
          say(`(${dropped} lines typed while busy were dropped)`);
          dropped = 0;
        }
        if (!following) prompt();
      }
    } finally {
      working = false;
    }
  };

  return new Promise<number>((resolve) => {
    rl.on("line", (raw: string) => {
      if (closed) return;
      const wasLogin = !loggedIn;
      if (wasLogin) {
        // The PIN never enters the history.
        const h = (rl as unknown as { history?: string[] }).history;
        if (Array.isArray(h)) h.splice(0, h.length);
      }
      const line = cleanLine(raw);
      if (line === null) {
        muted = false;
        say("line too long: ignored");
        if (!working) prompt();
        return;
      }
      if (queue.length >= MAX_QUEUED) {
        // A paste or a flood while busy: dropped, and not echoed (a serial line is slow).
        dropped++;
        muted = true;
        return;
      }
      queue.push(line);
      drained = pump();
    });
    rl.on("SIGINT", () => {
      // Ctrl-C: clear the line (and stop a follow).
      rl.write(null, { ctrl: true, name: "u" });
      if (running === "test-vend" && client !== null && !client.isClosed) cancelTestVend(client);
      else if (following) void stopFollow().then(prompt);
      else {
        opts.output.write("^C\r\n");
        prompt();
      }
    });
    rl.on("close", () => {
      if (closed) return;
      closed = true;
      if (idleTimer !== null) clearTimeout(idleTimer);
      const c = client;
      const end = async () => {
        // Input ended (Ctrl-D, or the end of piped input): what was typed runs first.
        await drained;
        // Logged out first: closing the connection below is the end, not a lost daemon.
        const wasIn = loggedIn;
        loggedIn = false;
        following = false;
        if (wasIn && c !== null) await c.request("logout", {}, { timeoutMs: 2000 }).catch(() => {});
        c?.close();
        muted = false;
        opts.output.write("\r\nbye\r\n");
        resolve(0);
      };
      void end();
    });
    say("vendd technician console");
    prompt();
  });
}
