import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { CLI } from "../support/cli.js";

/**
 * Start-up loads only what the board uses (issue 12): `vendd run` with the sim board (sim VMC, BLE, NFC,
 * GPIO) and the V10 interface is started under an ESM resolve hook that appends every module it resolves to
 * a file; modules of other boards and of the other payment interface must not be in it. The hook is given
 * as `data:` URLs, so the unit under test is the built CLI, unchanged.
 */
const HOOKS = `
import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.VENDD_MODULE_LOG, r.url + "\\n");
  return r;
}`;
const REGISTER = `import { register } from "node:module"; register(${JSON.stringify(
  `data:text/javascript,${encodeURIComponent(HOOKS)}`,
)});`;

/** Modules that a sim-board unit on the V10 interface has no use for. */
const NOT_NEEDED: { what: string; pattern: RegExp }[] = [
  { what: "the MDB adapter driver", pattern: /\/drivers\/vmc\/adapter\// },
  { what: "the pulse controller", pattern: /\/drivers\/vmc\/pulse\// },
  { what: "serialport", pattern: /\/node_modules\/(serialport|@serialport)\// },
  { what: "the older payment interface's driver", pattern: /\/payment\/legacy\/(?!options\.js)/ },
  { what: "bleno", pattern: /bleno/ },
  { what: "the PC/SC reader", pattern: /pcsc/i },
  { what: "johnny-five", pattern: /johnny-five/ },
];

let dir: string;
let emu: Emulator | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vendd-modules-"));
});
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function modulesOfRun(): Promise<string[]> {
  emu = await startEmulator({ pollDelayMs: 10 });
  const { v10 } = emu.info;
  const config = join(dir, "unit.json");
  writeFileSync(
    config,
    JSON.stringify({
      unit: { id: "vm-mods", name: "Module unit" },
      board: "sim",
      journal: { path: join(dir, "journal.db") },
      display: { kind: "none" },
      payment: {
        driver: "v10",
        v10: {
          baseUrl: v10.baseUrl,
          tokenUrl: v10.tokenUrl,
          clientId: v10.clientId,
          merchantVat: v10.merchantVat,
          storeId: v10.storeId,
        },
      },
    }),
    { mode: 0o600 },
  );
  const secrets = join(dir, "secrets.json");
  writeFileSync(secrets, JSON.stringify({ v10: { clientSecret: v10.clientSecret } }), { mode: 0o600 });
  const log = join(dir, "modules.txt");
  const child = spawn(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(REGISTER)}`,
      CLI,
      "run",
      "--config",
      config,
      "--secrets",
      secrets,
    ],
    { env: { ...process.env, VENDD_MODULE_LOG: log, NOTIFY_SOCKET: "" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  const inService = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not in service in time:\n${out.slice(-3000)}`)), 20_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('"msg":"unit in service"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`vendd run exited (${code}) before service:\n${out.slice(-3000)}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  try {
    await inService;
  } finally {
    child.kill("SIGTERM");
  }
  expect(await exited).toBe(0);
  expect(existsSync(log)).toBe(true);
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l !== "");
}

describe("vendd run with the sim board", () => {
  it("loads no module of another board or payment interface", async () => {
    const modules = await modulesOfRun();
    // The log is real: the modules this board does use are in it.
    for (const used of [/\/drivers\/vmc\/sim\.js$/, /\/payment\/v10\/index\.js$/, /\/journal\/sqlite\.js$/])
      expect(modules.some((m) => used.test(m))).toBe(true);
    for (const { what, pattern } of NOT_NEEDED) {
      const loaded = modules.filter((m) => pattern.test(m));
      expect(loaded, `${what} was loaded`).toEqual([]);
    }
  }, 30_000);
});
