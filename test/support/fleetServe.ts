/**
 * `vendd fleet serve --config FILE` (the built CLI) as a child process, once it prints the address it
 * serves (a config with `listen: 127.0.0.1:0` takes a free port; http or https with `tls:`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { CLI } from "./cli.js";

export interface ServedFleet {
  url: string;
  child: ChildProcess;
  /** SIGTERM, and the exit awaited. */
  stop(): Promise<void>;
}

export async function serveFleet(config: string): Promise<ServedFleet> {
  const child = spawn(process.execPath, [CLI, "fleet", "serve", "--config", config], {
    env: { ...process.env, VENDD_FAULT_POINT: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  let out = "";
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`fleet serve did not start: ${out}`)), 30_000);
    child.once("exit", (code) => fail(new Error(`fleet serve exited ${code}: ${out}`)));
    child.stderr?.on("data", (d: Buffer) => {
      out = (out + d.toString()).slice(-2000);
    });
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /serving (https?:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        done(m[1]);
      }
    });
  });
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
