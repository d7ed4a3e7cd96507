import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The built CLI the unit under test runs (`npm run build` makes it): beside this module when it runs from
 * `dist/` (`vendd demo --chaos`), else the working tree's `dist/` (tests run from the sources).
 */
export const BUILT_CLI = builtCli();

function builtCli(): string {
  const sibling = fileURLToPath(new URL("../cli/main.js", import.meta.url));
  return sibling.includes(`${sep}dist${sep}`) ? sibling : resolve("dist/src/cli/main.js");
}

/** The daemon child could not be started or did not come into service. */
export class DaemonProcessError extends Error {
  override readonly name = "DaemonProcessError";
  constructor(
    readonly code: "not-built" | "not-ready" | "exited",
    message: string,
  ) {
    super(message);
  }
}

export interface DaemonSpawnOptions {
  configPath: string;
  secretsPath: string;
  /** Extra environment (e.g. `VENDD_FAULT_POINT`). */
  env?: NodeJS.ProcessEnv;
  /** Wraps the command: `[prefix..., node, cli, run, ...]` (strace, fiu-run). */
  prefix?: readonly string[];
  /**
   * The program and its script instead of `[this node, BUILT_CLI]`: another build of vendd (an installed
   * release, an arm64 node under qemu: test/board/arm64.test.ts).
   */
  command?: readonly [string, string];
  /** Time to reach "unit in service", ms (default 20 000). */
  readyTimeoutMs?: number;
  /** Kept log tail, characters (default 200 000). */
  logLimit?: number;
}

/** How a daemon child ended: its exit code or the signal that killed it. */
export interface DaemonExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * One `vendd run` child process (the unit under test). Readiness is the "unit in service" log line
 * (src/engine/runner.ts start()); logs are JSON lines on stderr, kept as a bounded tail.
 */
export class DaemonProcess {
  private logText = "";
  private readonly exitPromise: Promise<DaemonExit>;
  private exitValue: DaemonExit | null = null;
  /** When the child was spawned, ms since the epoch. */
  readonly spawnedAt = Date.now();

  private constructor(
    readonly child: ChildProcess,
    private readonly logLimit: number,
  ) {
    this.exitPromise = new Promise((done) =>
      child.once("close", (code, signal) => {
        this.exitValue = { code, signal };
        done(this.exitValue);
      }),
    );
    const take = (d: Buffer) => {
      this.logText += d.toString();
      if (this.logText.length > this.logLimit) this.logText = this.logText.slice(-this.logLimit / 2);
    };
    child.stdout?.on("data", take);
    child.stderr?.on("data", take);
  }

  /** Starts the daemon; resolves once the child is running (not yet in service). */
  static spawn(opts: DaemonSpawnOptions): DaemonProcess {
    const [program, cli] = opts.command ?? [process.execPath, BUILT_CLI];
    if (!existsSync(cli))
      throw new DaemonProcessError("not-built", `${cli} is missing: run \`npm run build\` first`);
    const node = [program, cli, "run", "--config", opts.configPath, "--secrets", opts.secretsPath];
    const [cmd = process.execPath, ...args] = [...(opts.prefix ?? []), ...node];
    const child = spawn(cmd, args, {
      env: { ...process.env, VENDD_FAULT_POINT: "", ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    return new DaemonProcess(child, opts.logLimit ?? 200_000);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The log so far (tail). */
  get log(): string {
    return this.logText;
  }

  /** Null while running. */
  get exited(): DaemonExit | null {
    return this.exitValue;
  }

  /** Resolves when the child has exited. */
  whenExited(): Promise<DaemonExit> {
    return this.exitPromise;
  }

  /** Resolves when "unit in service" was logged; rejects if the child exits first or after `timeoutMs`. */
  async ready(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.logText.includes('"msg":"unit in service"')) {
      if (this.exitValue !== null)
        throw new DaemonProcessError(
          "exited",
          `daemon exited (${this.exitValue.code ?? this.exitValue.signal}) before service:\n${this.tail()}`,
        );
      if (Date.now() > deadline)
        throw new DaemonProcessError(
          "not-ready",
          `daemon not in service in ${timeoutMs} ms:\n${this.tail()}`,
        );
      await Promise.race([this.exitPromise, new Promise((r) => setTimeout(r, 20))]);
    }
  }

  /**
   * SIGKILL (a crash); resolves when the child is gone. Under a wrapper (strace) the wrapped daemon is
   * killed first: a killed tracer would only detach it and leave it running.
   */
  async crash(): Promise<DaemonExit> {
    if (this.exitValue === null) {
      for (const pid of descendants(this.child.pid)) signal(pid, "SIGKILL");
      this.child.kill("SIGKILL");
    }
    return this.exitPromise;
  }

  /** The wrapped daemon's pid under a wrapper (strace's child), else the child's own pid. */
  get daemonPid(): number | undefined {
    return descendants(this.child.pid)[0] ?? this.child.pid;
  }

  /** SIGTERM to the daemon (orderly stop), then SIGKILL after `graceMs` (default 10 000). */
  async stop(graceMs = 10_000): Promise<DaemonExit> {
    if (this.exitValue !== null) return this.exitValue;
    const pid = this.daemonPid;
    if (pid !== undefined) signal(pid, "SIGTERM");
    const timer = setTimeout(() => void this.crash(), graceMs);
    try {
      return await this.exitPromise;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The last lines of the log, for error messages. */
  tail(chars = 3000): string {
    return this.logText.slice(-chars);
  }
}

/** Child pids of `pid`, depth first (Linux /proc); empty when unknown or gone. */
function descendants(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8");
  } catch {
    return [];
  }
  const kids = text
    .trim()
    .split(/\s+/)
    .map(Number)
    .filter((n) => Number.isSafeInteger(n) && n > 0);
  return kids.flatMap((k) => [...descendants(k), k]);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}
