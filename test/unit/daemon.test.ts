import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { CLI, UNREACHABLE_V10_YAML, vendd } from "../support/cli.js";

const CANARY = "canary-Zq8-secret-7f3e91";
let dir: string;
let emu: Emulator | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-daemon-"));
});
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, content: string, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, content, { mode });
  return path;
}

describe("vendd run", () => {
  it("refuses invalid configuration, listing every error by path, and changes nothing", async () => {
    const config = write(
      "bad.yaml",
      [
        "unit: { id: vm-1, name: 5 }",
        `journal: { path: ${join(dir, "j.db")} }`,
        "payment:",
        "  driver: v10",
        "  v10:",
        "    baseUrl: http://127.0.0.1:9/",
        "    tokenUrl: http://127.0.0.1:9/t",
        "    clientId: c",
        "    merchantVat: DK1234",
        "    storeId: 6f1c2d3e-0000-4000-8000-000000000001",
        "    colour: blue",
      ].join("\n"),
    );
    const r = await vendd(["run", "--config", config], { env: { VENDD_V10_CLIENT_SECRET: "" } });
    expect(r.code).toBe(1);
    for (const path of [
      "unit.name",
      "payment.v10.merchantVat",
      "payment.v10.colour",
      "secrets.v10.clientSecret",
    ]) {
      expect(r.stderr).toContain(path);
    }
    expect(existsSync(join(dir, "j.db"))).toBe(false);
  });

  it("starts against the payment service, reports in service, stops on SIGTERM; no secret in any output", async () => {
    emu = await startEmulator({
      seed: { integrators: [{ clientId: "canary-client", clientSecret: CANARY }] },
    });
    const { v10 } = emu.info;
    const journal = join(dir, "journal.db");
    const config = write(
      "unit.yaml",
      [
        "unit: { id: vm-7, name: Test unit }",
        `journal: { path: ${journal} }`,
        "display: { kind: none }",
        "logging: { level: trace }",
        "payment:",
        "  driver: v10",
        "  v10:",
        `    baseUrl: ${v10.baseUrl}`,
        `    tokenUrl: ${v10.tokenUrl}`,
        "    clientId: canary-client",
        `    merchantVat: ${v10.merchantVat}`,
        `    storeId: ${v10.storeId}`,
      ].join("\n"),
    );
    const secrets = write("secrets.yaml", `v10: { clientSecret: ${CANARY} }\n`);
    const child = spawn(process.execPath, [CLI, "run", "--config", config, "--secrets", secrets], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const inService = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not in service in time:\n${out}`)), 20_000);
      const onData = (d: Buffer) => {
        out += d.toString();
        if (out.includes("unit in service")) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    await inService;
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out).not.toContain(CANARY);
    expect(out).toContain("stopping");
    expect(existsSync(journal)).toBe(true);
  }, 30_000);

  /** A V10 unit whose payment service (the discard port on loopback) refuses every connection. */
  const unreachableUnit = (name: string, id: string, journal: string) => ({
    config: write(
      `${name}.yaml`,
      [
        `unit: { id: ${id}, name: Unreachable unit }`,
        `journal: { path: ${journal} }`,
        "display: { kind: none }",
        ...UNREACHABLE_V10_YAML,
      ].join("\n"),
    ),
    secrets: write(`${name}-secrets.yaml`, "v10: { clientSecret: degraded-unit-secret }\n"),
  });

  it("stays up out of service when the payment service refuses connections (no crash loop); SIGTERM exits 0", async () => {
    const { config, secrets } = unreachableUnit("down", "vm-8", join(dir, "journal.db"));
    const run = running(["run", "--config", config, "--secrets", secrets]);
    await run.waitFor('"msg":"out of service"');
    // Today's failure mode was an exit within 0.6-6.6 s; it must still be running a while after saying why.
    await new Promise((r) => setTimeout(r, 1500));
    expect(run.exited()).toBe(false);
    expect(run.output()).toMatch(/"reason":"paymentUnreachable"/);
    expect(await run.stop()).toBe(0);
  }, 20_000);

  it("stays up out of service when the journal cannot be opened, saying path, cause and next step", async () => {
    const blocker = write("not-a-dir", "");
    const journal = join(blocker, "journal.db");
    const { config, secrets } = unreachableUnit("nojournal", "vm-9", journal);
    const run = running(["run", "--config", config, "--secrets", secrets]);
    await run.waitFor("cannot be used");
    await new Promise((r) => setTimeout(r, 1000));
    expect(run.exited()).toBe(false);
    expect(run.output()).toContain(`journal:   ${journal}`);
    expect(run.output()).toContain("the journal cannot be used");
    expect(run.output()).toMatch(/Recovering a unit|start fresh/);
    expect(run.output()).not.toContain("payment service");
    expect(await run.stop()).toBe(0);
  }, 20_000);
});

/** A `vendd` child whose output is collected; `waitFor` a text, `stop` with SIGTERM. */
function running(args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let code: number | null | undefined;
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const closed = new Promise<number | null>((resolve) =>
    child.on("close", (c) => {
      code = c;
      resolve(c);
    }),
  );
  return {
    output: () => out,
    exited: () => code !== undefined,
    async waitFor(text: string, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!out.includes(text)) {
        if (code !== undefined) throw new Error(`exited (${code}) before "${text}":\n${out}`);
        if (Date.now() > deadline) throw new Error(`no "${text}" in time:\n${out}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      if (code === undefined) child.kill("SIGTERM");
      return closed;
    },
  };
}
