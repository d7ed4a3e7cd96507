/**
 * A callback address the payment service refuses is shown, not only logged (issue 43). The fleet's
 * publicUrl is https on port 8443; the invoice service (the emulator, as the real one) calls back on 443 or
 * 80 only and refuses it. `vendd fleet doctor --config` says so (exit 1) with the address, the service's
 * answer and what to do; the running `vendd fleet serve` shows the same on the dashboard (Chromium) on every
 * page; with publicUrl on 443 the doctor says the service took it (exit 0). No secret is printed.
 *
 * From outside: the built CLI as processes (`npm run build`), the dashboard in Chromium (/usr/bin/chromium,
 * `.ci/run` installs it), the emulator's invoice service on loopback.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { openFleetDb } from "../../src/fleet/database.js";
import { addUser } from "../../src/fleet/web/accounts.js";
import { launchWatchedChromium, requireChromium } from "../support/browser.js";
import { CLI, vendd } from "../support/cli.js";

const ARTIFACTS = join("test-artifacts", "fleet-callback-refused");
const MANAGER = { username: "mia", password: "manager-password-1" };
const CALLBACK_SECRET = "inv-callback-secret-0123";

describe("a refused callback address: vendd fleet doctor and the dashboard", () => {
  let dir: string;
  let emu: Emulator;
  let browser: BrowserContext | undefined;
  let page: Page;
  let serve: ChildProcess | undefined;

  const config = (name: string, publicUrl: string): string => {
    const file = join(dir, name);
    writeFileSync(
      file,
      `db: fleet.db
listen: 127.0.0.1:0
publicUrl: ${publicUrl}
secretsFile: secrets.yaml
invoices:
  baseUrl: ${emu.info.invoices.baseUrl}
`,
    );
    return file;
  };

  beforeAll(async () => {
    requireChromium(ARTIFACTS);
    dir = mkdtempSync(join(tmpdir(), "vendd-callback-refused-"));
    emu = await startEmulator({});
    writeFileSync(
      join(dir, "secrets.yaml"),
      `invoicesAccessToken: "${emu.info.invoices.accessToken}"\ninvoicesCallbackSecret: "${CALLBACK_SECRET}"\n`,
      { mode: 0o600 },
    );
    const fdb = await openFleetDb(join(dir, "fleet.db"));
    await addUser(fdb.db, MANAGER.username, MANAGER.password, "manager", Date.now());
    await fdb.close();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (serve !== undefined && serve.exitCode === null) {
      const exited = new Promise((ok) => serve?.once("exit", ok));
      serve.kill("SIGTERM");
      await exited;
    }
    await emu?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("the doctor names the refusal and the next step; the dashboard shows it on every page", async () => {
    const bad = config("fleet.yaml", "https://fleet.example.com:8443");
    const doctor = await vendd(["fleet", "doctor", "--config", bad]);
    expect(doctor.code, doctor.stderr).toBe(1);
    expect(doctor.stdout).toContain(
      "REFUSED  invoices callback: the invoice service refused the callback address https://fleet.example.com:8443/invoices/callbacks:",
    );
    expect(doctor.stdout).toMatch(/callbackurl must use port 443 or 80/);
    expect(doctor.stdout).toContain("vendd fleet doctor --config FILE");
    for (const secret of [CALLBACK_SECRET, emu.info.invoices.accessToken])
      expect(doctor.stdout + doctor.stderr).not.toContain(secret);

    const child = spawn(process.execPath, [CLI, "fleet", "serve", "--config", bad], {
      cwd: dir,
      env: { ...process.env, VENDD_FLEET_DB: "", VENDD_FAULT_POINT: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    serve = child;
    let out = "";
    let err = "";
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const base = await new Promise<string>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`not serving: ${err}`)), 30_000);
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /serving (http:\/\/\S+)/.exec(out);
        if (m?.[1] !== undefined) {
          clearTimeout(timer);
          ok(m[1]);
        }
      });
    });
    ({ browser, page } = await launchWatchedChromium(join(dir, "chromium")));
    await page.goto(`${base}/login`);
    await page.fill("input[name=username]", MANAGER.username);
    await page.fill("input[name=password]", MANAGER.password);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
    // The server asks the service right after it starts listening: the notice is there once it answered.
    const notice = page.locator("main .notice[role=alert]");
    for (const until = Date.now() + 15_000; (await notice.count()) === 0 && Date.now() < until; )
      await page.reload();
    expect(await notice.textContent()).toMatch(
      /^the invoice service refused the callback address https:\/\/fleet\.example\.com:8443\/invoices\/callbacks: .*callbackurl must use port 443 or 80.*Set publicUrl in the fleet config/,
    );
    await page.screenshot({ path: join(ARTIFACTS, "overview.png"), fullPage: true });
    await page.goto(`${base}/units`);
    expect(await page.locator("main .notice[role=alert]").count()).toBe(1);
    expect(err).toMatch(/invoices: could not set the callback URL at the service/);
    for (const secret of [CALLBACK_SECRET, emu.info.invoices.accessToken])
      expect(out + err).not.toContain(secret);

    // The fix the notice names: publicUrl on 443; the doctor says the service took it.
    const good = config("fleet-443.yaml", "https://fleet.example.com");
    const fixed = await vendd(["fleet", "doctor", "--config", good]);
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    expect(fixed.stdout).toBe(
      "ok       invoices callback https://fleet.example.com/invoices/callbacks: the service took it\n",
    );
  }, 120_000);
});
