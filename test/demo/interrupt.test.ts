/**
 * Issue 32, defect 1: `npm start` (the demo), then Ctrl-C, as a newcomer does it. Ctrl-C in a terminal sends
 * SIGINT to the whole foreground process group: npm, the demo, and (before the fix) the socat that carries
 * the simulated machine's serial line. The first Ctrl-C finishes the vend in progress and prints the summary
 * with exit 0 and `consistent: true`, whenever it comes (while loading, idle, mid-vend); a second one, later,
 * stops at once. Before the fix every Ctrl-C ended `consistent: false`, exit 1 (or npm died of the signal).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm start` in a process group of its own, as a terminal runs it in the foreground. */
function npmStart(): Run {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\``);
  const child = spawn("npm", ["start", "--silent"], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, VENDD_FAULT_POINT: "" },
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Whether the group of `run` has the demo's node process yet. */
function demoStarted(run: Run): boolean {
  const r = spawnSync("pgrep", ["-g", String(run.child.pid), "-f", "^node .*main.js demo"], {
    encoding: "utf8",
  });
  return r.stdout.trim() !== "";
}

/** Ctrl-C: SIGINT to every process of the group. */
function ctrlC(run: Run): void {
  if (run.child.pid !== undefined) process.kill(-run.child.pid, "SIGINT");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (what()) return true;
  return what();
}

/** The summary line the demo prints last. */
function summary(stdout: string): { vends: number; consistent: boolean } {
  const line = stdout
    .trim()
    .split("\n")
    .reverse()
    .find((l) => l.startsWith('{"vends"'));
  expect(line, `no summary line in:\n${stdout.slice(-500)}`).toBeDefined();
  return JSON.parse(line ?? "{}") as { vends: number; consistent: boolean };
}

async function endsClean(run: Run): Promise<{ vends: number; consistent: boolean }> {
  const timer = setTimeout(
    () => run.child.pid !== undefined && process.kill(-run.child.pid, "SIGKILL"),
    60_000,
  );
  const end = await run.exited;
  clearTimeout(timer);
  expect(end, `stderr:\n${run.stderr().slice(-2000)}`).toEqual({ code: 0, signal: null });
  const s = summary(run.stdout());
  expect(s.consistent).toBe(true);
  expect(run.stderr()).not.toContain("inconsistent:");
  return s;
}

describe("npm start, then Ctrl-C: the vend in progress finishes, exit 0, consistent", () => {
  it("Ctrl-C while the demo is still starting", async () => {
    const run = npmStart();
    // Once npm has started the demo and Node has booted (before that, npm or Node alone are there to
    // stop), while the demo loads and starts its emulator and machine.
    expect(await waitFor(() => demoStarted(run), 30_000)).toBe(true);
    await sleep(400);
    expect(run.stdout()).not.toContain("Choose a product");
    ctrlC(run);
    await endsClean(run);
  }, 90_000);

  it("Ctrl-C in the middle of a vend (the machine asked, the customer paying)", async () => {
    const run = npmStart();
    // The screen shows the price once the machine asked for a vend: the customer is paying.
    expect(
      await waitFor(() => /Scan with the app to pay|Approve in the app/.test(run.stdout()), 30_000),
    ).toBe(true);
    await sleep(300);
    ctrlC(run);
    const s = await endsClean(run);
    expect(s.vends).toBeGreaterThanOrEqual(1);
  }, 90_000);

  it("Ctrl-C after several vends", async () => {
    const run = npmStart();
    expect(await waitFor(() => /#2 /.test(run.stdout()), 60_000)).toBe(true);
    ctrlC(run);
    const s = await endsClean(run);
    expect(s.vends).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it("a second Ctrl-C, a moment later, stops at once", async () => {
    const run = npmStart();
    expect(
      await waitFor(() => /Scan with the app to pay|Approve in the app/.test(run.stdout()), 30_000),
    ).toBe(true);
    ctrlC(run);
    await waitFor(() => run.stderr().includes("finishing the vend in progress"), 10_000);
    await sleep(1_200);
    const second = Date.now();
    ctrlC(run);
    await run.exited;
    expect(Date.now() - second).toBeLessThan(10_000);
  }, 90_000);
});
