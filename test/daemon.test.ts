import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../src/emulator/index.js";
import { CLI, vendd } from "./cli-support.js";

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
});
