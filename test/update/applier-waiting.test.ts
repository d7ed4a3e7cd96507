/**
 * `config apply` with no update applier running (issue 43): the console's `config apply` hands the file to
 * the applier's inbox; while no applier takes it, the console's `status` and the built `vendd bundle status`
 * show it waiting, and once it has waited past a minute they, and the next `config apply`, say plainly
 * that no applier has run and what to do. The console is the built `vendd console` on a real PTY (socat)
 * against a daemon in this process.
 */
import { appendFileSync, readdirSync, rmSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { hashPin } from "../../src/core/pin.js";
import { vendd } from "../support/cli.js";
import { CANARY_PIN, PtyConsole } from "../support/console.js";
import { HAVE_SOCAT, requireBuiltCli } from "../support/daemon.js";
import { NOWHERE, startTestDaemon, type TestDaemon, tempDir, v10Unit } from "../support/inprocess.js";

if (!HAVE_SOCAT)
  process.stderr.write("applier-waiting skipped: socat is not installed (apt-get install socat)\n");

let dir: string;
let unit: TestDaemon | undefined;
let con: PtyConsole | undefined;
afterEach(async () => {
  await con?.stop("SIGKILL");
  await unit?.daemon.stop();
  unit = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!HAVE_SOCAT)("config apply without an update applier", () => {
  it("says the file waits, then that no applier has run, in the console, its status and bundle status", async () => {
    requireBuiltCli();
    dir = tempDir();
    v10Unit(dir, "vm-wait", NOWHERE);
    const config = join(dir, "unit.yaml");
    const inbox = join(dir, "inbox");
    appendFileSync(
      config,
      `\nconsole: { pinHash: "${await hashPin(CANARY_PIN, 1024)}" }\nupdates: { inbox: ${inbox}, stateDir: ${join(dir, "updates")} }\n`,
    );
    const loaded = loadConfig(config, { secretsFile: join(dir, "secrets.yaml"), env: {} });
    const u = await startTestDaemon(loaded, { deps: { configFile: config } });
    unit = u;
    const c = PtyConsole.start(join(dir, "control.sock"), 300, 400);
    con = c;
    await c.waitFor("PIN or badge: ");
    await c.line(CANARY_PIN, /logged in[\s\S]*vendd> /);

    await c.line("config set unit.name First name", "staged:");
    const first = await c.line("config apply", /handed to the update applier[\s\S]*vendd> /);
    expect(first).toMatch(/queued as .*inbox\/local\/console-\d+\.yaml/);
    expect(first).not.toContain("NOT APPLIED YET");
    const [name] = readdirSync(join(inbox, "local"));
    expect(name).toMatch(/^console-\d+\.yaml$/);
    const waiting = join(inbox, "local", name ?? "");

    // Just queued: status shows it waiting, no alarm yet.
    const fresh = await c.line("status", /audit log[\s\S]*vendd> /);
    expect(fresh).toContain(`waiting for the update applier: ${waiting} (since `);
    expect(fresh).not.toContain("no update applier has taken it");
    const cliFresh = await vendd(["bundle", "status", "--config", config]);
    expect(cliFresh.code).toBe(0);
    expect(cliFresh.stdout).toContain(`waiting for the update applier: ${waiting}`);

    // Two minutes later nothing has taken it: every view says no applier runs, and how to run one.
    const old = (Date.now() - 120_000) / 1000;
    utimesSync(waiting, old, old);
    const stale = await c.line("status", /audit log[\s\S]*vendd> /);
    expect(stale).toMatch(
      /waiting for the update applier: .*console-\d+\.yaml \(since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC[^,]*, 1\d\d s\); no update applier has taken it: is vendd-bundle\.path active \(systemctl status vendd-bundle\.path\)\?/,
    );
    expect(stale).toContain(`vendd bundle apply --config ${config} --inbox ${inbox}`);
    u.clock.advance(1000); // the next file's name is the daemon's time (console-<ms>.yaml)
    await c.line("config set unit.name Second name", "staged:");
    const second = await c.line("config apply", /handed to the update applier[\s\S]*vendd> /);
    expect(second).toContain(`NOT APPLIED YET: 1 earlier file(s) still wait in ${inbox}`);
    expect(second).toContain("no update applier has taken it");

    const cli = await vendd(["bundle", "status", "--config", config]);
    expect(cli.stdout).toMatch(/console-\d+\.yaml \(since .*\); no update applier has taken it/);
    const json = JSON.parse((await vendd(["bundle", "status", "--config", config, "--json"])).stdout) as {
      waiting: { file: string; since: string }[];
    };
    expect(json.waiting).toHaveLength(2);
    expect(json.waiting[0]?.file).toBe(waiting);
  });
});
