import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Emulator } from "../../src/emulator/index.js";
import { CLI } from "./cli.js";

/** A process whose output is collected; `waitFor` a text after a mark. */
export class Collected {
  out = "";
  code: number | null | undefined;
  readonly closed: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stdout?.on("data", (d: Buffer) => {
      this.out += d.toString("latin1");
    });
    child.stderr?.on("data", (d: Buffer) => {
      this.out += d.toString("latin1");
    });
    this.closed = new Promise((resolve) =>
      child.on("close", (c) => {
        this.code = c;
        resolve(c);
      }),
    );
  }

  mark(): number {
    return this.out.length;
  }

  async waitFor(pattern: string | RegExp, from = 0, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = this.out.slice(from);
      if (typeof pattern === "string" ? text.includes(pattern) : pattern.test(text)) return text;
      if (this.code !== undefined)
        throw new Error(`exited (${this.code}) before ${String(pattern)}:\n${text}`);
      if (Date.now() > deadline)
        throw new Error(
          `no ${String(pattern)} in time:\n${text.slice(-3000)}\n--- before:\n${this.out.slice(Math.max(0, from - 1500), from)}`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.code === undefined) this.child.kill(signal);
    return this.closed;
  }
}

/** `vendd console` on a real PTY (socat EXEC ... pty): the test types into it and reads the screen. */
export class PtyConsole extends Collected {
  /** `columns`: the terminal's width (stty), else the PTY's default (none: the console assumes 80). */
  static start(socket: string, idleSeconds = 300, columns?: number): PtyConsole {
    const command = `${process.execPath} ${CLI} console --socket ${socket} --idle-timeout ${idleSeconds}`;
    const address =
      columns === undefined
        ? `EXEC:${command},pty,setsid,ctty,stderr,sane`
        : `SYSTEM:stty cols ${columns} rows 40; exec ${command},pty,setsid,ctty,stderr,sane`;
    const child = spawn("socat", ["STDIO", address], { stdio: ["pipe", "pipe", "pipe"] });
    return new PtyConsole(child);
  }

  type(text: string | Buffer): void {
    this.child.stdin?.write(text);
  }

  /** Types a line and waits for `expect` in what follows. */
  async line(text: string, expect: string | RegExp, timeoutMs = 15_000): Promise<string> {
    const m = this.mark();
    this.type(`${text}\r`);
    return this.waitFor(expect, m, timeoutMs);
  }
}

export const CANARY_SECRET = "canary-Console-secret-55e1";
export const CANARY_PIN = "80417263";

/**
 * A unit config against the emulator in `dir` (V10, sim VMC and board, no display unless `opts.display`
 * gives the section's flow mapping), with the console PIN hash and, with `opts.beaconId`, the V10 beaconId;
 * returns the config and secrets paths.
 */
export function writeUnit(
  dir: string,
  emu: Emulator,
  pinHash: string,
  extra: string[] = [],
  opts: { display?: string; beaconId?: string } = {},
) {
  const { v10 } = emu.info;
  const config = join(dir, "unit.yaml");
  writeFileSync(
    config,
    [
      "# the test unit",
      "unit: { id: vm-c, name: Console unit }",
      `journal: { path: ${join(dir, "journal.db")} }`,
      `display: ${opts.display ?? "{ kind: none }"}`,
      "logging: { level: debug }",
      "payment:",
      "  driver: v10",
      "  v10:",
      `    baseUrl: ${v10.baseUrl}`,
      `    tokenUrl: ${v10.tokenUrl}`,
      "    clientId: console-client",
      `    merchantVat: ${v10.merchantVat}`,
      `    storeId: ${v10.storeId}`,
      ...(opts.beaconId === undefined ? [] : [`    beaconId: "${opts.beaconId}"`]),
      "console:",
      `  pinHash: "${pinHash}"`,
      "updates:",
      `  inbox: ${join(dir, "inbox")}`,
      `  stateDir: ${join(dir, "updates")}`,
      `  releaseRoot: ${join(dir, "release")}`,
      `  restartCommand: [sh, -c, "kill -TERM $(cat ${join(dir, "daemon.pid")})"]`,
      "  health: { holdMs: 1000, timeoutMs: 30000, pollMs: 100 }",
      ...extra,
    ].join("\n"),
    { mode: 0o640 },
  );
  const secrets = join(dir, "secrets.yaml");
  writeFileSync(secrets, `v10: { clientSecret: ${CANARY_SECRET} }\n`, { mode: 0o600 });
  return { config, secrets };
}

/**
 * The daemon as systemd runs it (Restart=always): started again whenever it exits (until `stop`); its pid
 * in `pidFile` (the applier's restart command kills it); `all` is every line any of its runs wrote.
 */
export class Supervised {
  current: Collected;
  all = "";
  runs = 1;
  private stopped = false;

  constructor(
    private readonly args: string[],
    private readonly pidFile: string,
  ) {
    this.current = this.spawn();
  }

  private spawn(): Collected {
    const c = new Collected(
      spawn(process.execPath, [CLI, ...this.args], { stdio: ["ignore", "pipe", "pipe"] }),
    );
    writeFileSync(this.pidFile, `${c.child.pid}\n`);
    c.child.stdout?.on("data", (d: Buffer) => {
      this.all += d.toString();
    });
    c.child.stderr?.on("data", (d: Buffer) => {
      this.all += d.toString();
    });
    void c.closed.then(() => {
      if (!this.stopped) {
        this.runs++;
        this.current = this.spawn();
      }
    });
    return c;
  }

  async waitRuns(n: number, text: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.runs < n || !this.current.out.includes(text)) {
      if (Date.now() > deadline) throw new Error(`run ${n} never said ${text}:\n${this.all.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async stop(): Promise<number | null> {
    this.stopped = true;
    return this.current.stop();
  }
}
