import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { VmcSimCore } from "./core.js";

/**
 * A pseudo-terminal without native modules: `socat` (Debian package `socat`) opens a PTY, links it at
 * `linkPath` and bridges it to its own stdin/stdout, which the simulator reads and writes. Killing the
 * child removes the device, exactly like pulling a USB adapter.
 */
export class PtyError extends Error {
  override readonly name = "PtyError";
  constructor(
    readonly code: "socat-missing" | "start-failed",
    message: string,
  ) {
    super(message);
  }
}

/** True when `socat` can be run (tests that need a PTY skip with a message otherwise). */
export function socatAvailable(): boolean {
  const r = spawnSync("socat", ["-V"], { stdio: "ignore" });
  return r.error === undefined && r.status === 0;
}

export interface PtyBridge {
  /** The real device node behind `linkPath`, e.g. `/dev/pts/3`. */
  readonly ptsPath: string;
  /** Bytes to the host: a string is sent as UTF-8 by socat's stdin (text), a Buffer byte for byte. */
  write(data: string | Uint8Array): void;
  /** Ends the PTY (the device disappears); resolves when socat has exited. */
  kill(): Promise<void>;
}

/**
 * Starts socat and resolves once the PTY exists at `linkPath`.
 * @param onData bytes the host wrote to the PTY.
 * @param startTimeoutMs how long to wait for socat to report the PTY (default 5000).
 */
export function openPty(
  linkPath: string,
  onData: (chunk: Buffer) => void,
  startTimeoutMs = 5000,
): Promise<PtyBridge> {
  return new Promise((resolve, reject) => {
    let child: ChildProcessWithoutNullStreams;
    try {
      // Its own process group: a Ctrl-C in the terminal (SIGINT to the whole foreground group) must not end
      // the simulated machine's PTY under the vend the demo is finishing. It still ends with its owner:
      // kill() below, or the end of its standard input when the owner dies.
      child = spawn("socat", ["-d", "-d", `pty,raw,echo=0,link=${linkPath}`, "STDIO"], {
        stdio: "pipe",
        detached: true,
      });
    } catch (err) {
      reject(new PtyError("socat-missing", `cannot run socat: ${String(err)}`));
      return;
    }
    let stderr = "";
    let settled = false;
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    const timer = setTimeout(
      () => fail(`socat did not report a PTY within ${startTimeoutMs} ms`),
      startTimeoutMs,
    );
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new PtyError("start-failed", why));
    };
    child.once("error", (err) => fail(`socat: ${err.message}`));
    child.once("exit", (code) => fail(`socat exited (${code}): ${stderr.slice(-300)}`));
    child.stdout.on("data", onData);
    child.stdin.on("error", () => undefined); // EPIPE after the child died: the device is gone anyway
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      if (stderr.length < 4096) stderr += text;
      // socat -d -d prints "N PTY is /dev/pts/N", then "starting data transfer loop" when ready.
      const pts = /PTY is (\S+)/.exec(stderr)?.[1];
      if (settled || !pts || !stderr.includes("starting data transfer loop") || !existsSync(linkPath)) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        ptsPath: pts,
        write: (data) => {
          if (child.exitCode === null && !child.stdin.destroyed) child.stdin.write(data);
        },
        kill: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
          await exited;
        },
      });
    });
  });
}

/** Opens an existing tty (the simulator's end of a PTY pair made elsewhere) with the serialport binding. */
export async function attachTty(path: string, core: VmcSimCore): Promise<PtyBridge> {
  const { SerialPort } = await import("serialport");
  const port = new SerialPort({ path, baudRate: 115_200, autoOpen: false });
  await new Promise<void>((resolve, reject) =>
    port.open((err) =>
      err ? reject(new PtyError("start-failed", `cannot open ${path}: ${err.message}`)) : resolve(),
    ),
  );
  port.on("data", (chunk: Buffer) => core.receive(chunk));
  port.on("error", () => undefined); // a vanished tty ends the session; close() still resolves
  return {
    ptsPath: path,
    write: (data) => {
      if (port.isOpen) port.write(data, "latin1");
    },
    kill: () => new Promise<void>((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve())),
  };
}
