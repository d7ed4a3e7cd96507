import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";

export const CLI = resolve("dist/src/cli/main.js");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `vendd` command (npm test builds it first, in pretest) with a time limit; `input`, when
 * given, is written to its stdin (closed after), otherwise stdin is /dev/null.
 */
export function vendd(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string; cwd?: string } = {},
): Promise<CliResult> {
  if (!existsSync(CLI))
    throw new Error(`${CLI} is missing: run \`npm run build\` (npm test does it in pretest)`);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...opts.env },
      ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
      stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Unit-config YAML lines for a V10 payment provider nobody listens on (port 9); the secret goes elsewhere. */
export const UNREACHABLE_V10_YAML: readonly string[] = [
  "payment:",
  "  driver: v10",
  "  v10:",
  "    baseUrl: http://127.0.0.1:9/",
  "    tokenUrl: http://127.0.0.1:9/t",
  "    clientId: c",
  "    merchantVat: DK12345678",
  "    storeId: 6f1c2d3e-0000-4000-8000-000000000001",
];
