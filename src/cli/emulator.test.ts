import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runEmulatorCli } from "./emulator.js";

function io() {
  const out: string[] = [];
  const err: string[] = [];
  let stop = (): void => {};
  const stopped = new Promise<void>((r) => {
    stop = r;
  });
  let printed = (): void => {};
  const firstOutput = new Promise<void>((r) => {
    printed = r;
  });
  return {
    out,
    err,
    stop,
    firstOutput,
    io: {
      stdout: (t: string) => {
        out.push(t);
        printed();
      },
      stderr: (t: string) => err.push(t),
      stopped: () => stopped,
    },
  };
}

describe("vendd emulator command", () => {
  it("--json prints exactly one JSON line with the endpoints and credentials, then stops on request", async () => {
    const dir = await mkdtemp(join(tmpdir(), "vendd-emu-"));
    const seed = join(dir, "seed.json");
    await writeFile(seed, JSON.stringify({ users: [{ phone: "+4520030000", features: ["walksAway"] }] }));
    const t = io();
    const done = runEmulatorCli(["--json", "--port", "0", "--host", "127.0.0.1", "--seed", seed], t.io);
    await t.firstOutput;
    expect(t.out).toHaveLength(1);
    const line = t.out[0] ?? "";
    expect(line.endsWith("\n")).toBe(true);
    const info = JSON.parse(line) as Record<string, unknown> & { port: number; users: { phone: string }[] };
    expect(Object.keys(info)).toEqual([
      "port",
      "admin",
      "v10",
      "legacy",
      "users",
      "subscriptions",
      "invoices",
      "online",
      "reporting",
    ]);
    const subs = info.subscriptions as Record<string, unknown>;
    expect(subs.tokenUrl).toBe(`http://127.0.0.1:${info.port}/subscriptions-auth/connect/token`);
    expect(Object.keys(subs)).toEqual([
      "baseUrl",
      "tokenUrl",
      "clientId",
      "clientSecret",
      "merchantId",
      "providerId",
      "deprecated",
    ]);
    expect(info.admin).toBe(`http://127.0.0.1:${info.port}/_admin`);
    expect(info.users.map((u) => u.phone)).toContain("+4520030000");
    const clock = await fetch(`http://127.0.0.1:${info.port}/_admin/clock`);
    expect(clock.status).toBe(200);
    t.stop();
    expect(await done).toBe(0);
    await expect(fetch(`http://127.0.0.1:${info.port}/_admin/clock`)).rejects.toThrow();
  });

  it("without --json prints a readable summary; bad options exit 2", async () => {
    const t = io();
    const done = runEmulatorCli([], t.io);
    await t.firstOutput;
    expect(t.out.join("")).toMatch(/clientSecret/);
    t.stop();
    expect(await done).toBe(0);
    const bad = io();
    expect(await runEmulatorCli(["--port", "x"], bad.io)).toBe(2);
    expect(await runEmulatorCli(["--bogus"], bad.io)).toBe(2);
    expect(bad.err.join("")).toMatch(/usage/);
  });
});
