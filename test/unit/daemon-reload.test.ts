import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { CLI } from "../support/cli.js";

let dir: string | undefined;
let emu: Emulator | undefined;
let child: ChildProcess | undefined;

afterEach(async () => {
  child?.kill("SIGKILL");
  child = undefined;
  await emu?.close();
  emu = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

interface Line {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

/** The JSON log lines of `text` (anything else, such as a stack trace, is skipped). */
function lines(text: string): Line[] {
  return text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line);
}

describe("vendd run: SIGHUP (systemctl reload) and an armed fault point", () => {
  it("re-reads the config: an invalid one is logged and ignored, logging.level applies at once, other keys wait for a restart; VENDD_FAULT_POINT is logged loudly once", async () => {
    const d = mkdtempSync(join(tmpdir(), "vendd-reload-"));
    dir = d;
    const e = await startEmulator();
    emu = e;
    const { v10 } = e.info;
    const configText = (over: { name?: string; level: string; vendTimeoutMs: number }) =>
      [
        `unit: { id: vm-8, name: ${over.name ?? "Reload unit"} }`,
        `journal: { path: ${join(d, "journal.db")} }`,
        "display: { kind: none }",
        `logging: { level: ${over.level} }`,
        `engine: { vendTimeoutMs: ${over.vendTimeoutMs} }`,
        "payment:",
        "  driver: v10",
        "  v10:",
        `    baseUrl: ${v10.baseUrl}`,
        `    tokenUrl: ${v10.tokenUrl}`,
        `    clientId: ${v10.clientId}`,
        `    merchantVat: ${v10.merchantVat}`,
        `    storeId: ${v10.storeId}`,
      ].join("\n");
    const config = join(d, "unit.yaml");
    writeFileSync(config, configText({ level: "info", vendTimeoutMs: 30_000 }), { mode: 0o600 });
    const secrets = join(d, "secrets.yaml");
    writeFileSync(secrets, `v10: { clientSecret: ${v10.clientSecret} }\n`, { mode: 0o600 });

    const c = spawn(process.execPath, [CLI, "run", "--config", config, "--secrets", secrets], {
      // Armed at a hit the test never reaches: no vend happens, so the process is never killed by it.
      env: { ...process.env, VENDD_FAULT_POINT: "session.closed@1000" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = c;
    let out = "";
    c.stdout?.on("data", (b: Buffer) => {
      out += b.toString();
    });
    c.stderr?.on("data", (b: Buffer) => {
      out += b.toString();
    });
    const exited = new Promise<number | null>((resolve) => c.on("close", resolve));
    const until = async (what: string, found: (l: Line) => boolean, from = 0) => {
      const deadline = Date.now() + 20_000;
      while (!lines(out.slice(from)).some(found)) {
        if (c.exitCode !== null || c.signalCode !== null || Date.now() > deadline) {
          throw new Error(`${what}: not logged (exit ${c.exitCode ?? c.signalCode}):\n${out}`);
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    };

    await until("in service", (l) => l.msg === "unit in service");
    const armed = lines(out).filter((l) => String(l.msg).includes("VENDD_FAULT_POINT"));
    expect(armed).toHaveLength(1);
    expect(armed[0]).toMatchObject({ level: 50, faultPoint: "session.closed@1000" });

    // An invalid config: logged at error with its path, ignored; the unit keeps running.
    writeFileSync(config, configText({ name: "5", level: "debug", vendTimeoutMs: 45_000 }));
    let mark = out.length;
    c.kill("SIGHUP");
    await until("invalid reload", (l) => l.level === 50 && String(l.msg).startsWith("reload: invalid"), mark);
    expect(out.slice(mark)).toContain("unit.name");
    expect(c.exitCode).toBeNull();

    // A valid edit: the level applies at once, the engine timeout waits for a restart.
    writeFileSync(config, configText({ level: "warn", vendTimeoutMs: 45_000 }));
    mark = out.length;
    c.kill("SIGHUP");
    await until("restart warning", (l) => l.level === 40 && String(l.msg).includes("after a restart"), mark);
    const warned = lines(out.slice(mark)).find((l) => l.level === 40);
    expect(warned?.keys).toEqual(["engine.vendTimeoutMs"]);

    mark = out.length;
    c.kill("SIGTERM");
    expect(await exited).toBe(0);
    // At warn, the info lines of the stop ("stopping", the engine's) are no longer written.
    expect(lines(out.slice(mark)).filter((l) => l.level < 40)).toEqual([]);
    expect(out).not.toContain(v10.clientSecret);
  }, 40_000);
});
