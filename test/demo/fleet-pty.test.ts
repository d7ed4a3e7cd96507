/**
 * `vendd demo --fleet` run interactively (issue 43): on a real terminal (socat's PTY, the demo's stdout and
 * stderr both on it) each unit's vends are printed as they happen, one line each, long before the first
 * Ctrl-C; before the fix the terminal showed only the dashboard's address and, every 10 s, event counts.
 * Then Ctrl-C (typed on the terminal: ^C) ends it with its consistent summary.
 *
 * Needs socat (`.ci/run` installs it) and the build (`npm run build`).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";
import { Collected } from "../support/console.js";

describe("vendd demo --fleet on a terminal", () => {
  const dir = mkdtempSync(join(tmpdir(), "vendd-demo-fleet-pty-"));
  let run: Collected | undefined;

  afterAll(async () => {
    if (run !== undefined && run.code === undefined) await run.stop("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints each unit's vends as they happen, then the summary on Ctrl-C", async () => {
    expect(existsSync(CLI), "build first: npm run build").toBe(true);
    const command = [
      process.execPath,
      CLI,
      "demo",
      "--fleet",
      "--seed",
      "11",
      "--fleet-db",
      join(dir, "fleet.db"),
      "--fleet-password-file",
      join(dir, "password"),
    ].join(" ");
    const child = spawn("socat", ["STDIO", `EXEC:${command},pty,setsid,ctty,stderr,sane`], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    run = new Collected(child);
    const started = await run.waitFor("Ctrl-C to stop", 0, 60_000);
    expect(started).toContain("fleet dashboard: http://127.0.0.1:");
    const from = run.mark();
    // The first vend of every unit, each on its own line, with its amount and result.
    for (const unit of ["demo-1", "demo-2", "demo-3"])
      await run.waitFor(new RegExp(`${unit} vend 1: \\d+\\.\\d{2} DKK captured\\r?\\n`), from, 60_000);
    const seen = run.out.slice(from);
    // Still running: the lines came while it vends, not with the summary at the end.
    expect(run.code).toBeUndefined();
    expect(seen).not.toContain('"consistent"');
    const lines = seen.split(/\r?\n/).filter((l) => / vend \d+: /.test(l));
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const l of lines) expect(l).toMatch(/^demo-[123] vend \d+: \d+\.\d{2} DKK [a-zA-Z]+( \(.+\))?$/);

    const beforeStop = run.mark();
    child.stdin?.write("\x03"); // Ctrl-C typed on the terminal: the line discipline sends SIGINT
    const end = await run.waitFor(/"consistent":true\}/, beforeStop, 60_000);
    expect(end).toContain("stopping: finishing the vend in progress");
    expect(await run.closed).toBe(0);
  }, 150_000);
});
