/**
 * Issue 43, a fleet manager's first day with the built CLI as a process: the first-admin step of
 * docs/fleet-server.md works as written against a fleet config, every fleet admin command takes `--config`
 * (and uses the database it names), and an unknown option gets the command's own usage, never Node's
 * argument parser text.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { vendd } from "../support/cli.js";

/** Every fleet administration command, as a user types it (positionals where it needs one). */
const ADMIN: readonly (readonly string[])[] = [
  ["fleet", "init"],
  ["fleet", "units"],
  ["fleet", "approve", "u1"],
  ["fleet", "revoke", "u1"],
  ["fleet", "bundle", "upload", "x.vbundle"],
  ["fleet", "user", "add", "admin", "--role", "manager"],
  ["fleet", "user", "list"],
  ["fleet", "user", "remove", "admin"],
  ["fleet", "backup", "--out", "copy.db"],
  ["fleet", "reconcile", "--from", "2026-11-24", "--to", "2026-11-24"],
  ["fleet", "reconcile", "--dex", "--from", "2026-11-24", "--to", "2026-11-24"],
  ["fleet", "alerts"],
];

describe("fleet admin commands and --config (issue 43)", () => {
  const dir = mkdtempSync(join(tmpdir(), "vendd-fleet-admin-"));
  const env = {};
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("docs/fleet-server.md's first-admin step, then the other admin commands, against the config's database", async () => {
    const docs = readFileSync("docs/fleet-server.md", "utf8");
    const step =
      /vendd-fleet (fleet user add admin --role manager --config \/etc\/vendd-fleet\/fleet\.yaml)/.exec(docs);
    expect(step, "the first-admin step in docs/fleet-server.md").not.toBeNull();
    const cfg = join(dir, "fleet.yaml");
    writeFileSync(cfg, "db: state/fleet.db\nlisten: 127.0.0.1:0\n");
    writeFileSync(join(dir, "pw"), "a-long-enough-password\n");
    mkdirSync(join(dir, "state"));
    const init = await vendd(["fleet", "init", "--config", cfg], { env });
    expect(init.stderr).toBe("");
    expect(init.code).toBe(0);
    const args = (step?.[1] ?? "").split(" ").map((a) => (a === "/etc/vendd-fleet/fleet.yaml" ? cfg : a));
    const add = await vendd([...args, "--password-file", join(dir, "pw")], { env });
    expect(add.stderr).toBe("");
    expect(add.code).toBe(0);
    expect(add.stdout).toContain(join(dir, "state", "fleet.db"));
    const list = await vendd(["fleet", "user", "list", "--config", cfg, "--json"], { env });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ username: "admin", role: "manager" }),
    ]);
    const units = await vendd(["fleet", "units", "--config", cfg, "--json"], { env });
    expect([units.code, JSON.parse(units.stdout)]).toEqual([0, { units: [] }]);
    const alerts = await vendd(["fleet", "alerts", "--config", cfg], { env });
    expect(alerts.code).toBe(0);
    // Reconciliation takes the database from the config too: only the missing reporting settings stop it.
    const recon = await vendd(
      ["fleet", "reconcile", "--config", cfg, "--from", "2026-11-24", "--to", "2026-11-24"],
      { env: { ...env, VENDD_REPORTING: join(dir, "none.yaml") } },
    );
    expect(recon.code).toBe(1);
    expect(recon.stderr).toMatch(/none\.yaml/);
    const dex = await vendd(
      ["fleet", "reconcile", "--dex", "--config", cfg, "--from", "2026-11-24", "--to", "2026-11-24"],
      { env },
    );
    expect(dex.stderr).not.toMatch(/no fleet database/);
    const backup = await vendd(["fleet", "backup", "--config", cfg, "--out", join(dir, "copy.db")], { env });
    expect(backup.code).toBe(0);
    const remove = await vendd(["fleet", "user", "remove", "admin", "--config", cfg], { env });
    expect(remove.code).toBe(0);
  }, 120_000);

  it.each(ADMIN.map((a) => [a.slice(0, a[1] === "user" || a[1] === "bundle" ? 3 : 2).join(" "), a] as const))(
    "%s: --config is in its usage; an unknown option gets its own usage, not Node's parser text",
    async (words, args) => {
      const help = await vendd([...args.slice(0, words.split(" ").length), "--help"], { env });
      expect(help.code).toBe(0);
      // The command's usage line and its continuation lines (indented).
      const lines = help.stdout.split("\n");
      const at = lines.findIndex((l) => l.includes(`vendd ${words}`));
      let end = at + 1;
      while (end < lines.length && /^\s{4,}\[/.test(lines[end] ?? "")) end += 1;
      const usageLine = lines.slice(at, end).join(" ");
      expect(usageLine, help.stdout).toContain("--config");
      const bad = await vendd([...args, "--bogus"], { env });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("unknown option --bogus");
      expect(bad.stderr).toContain(`vendd ${words}`);
      expect(bad.stderr).not.toMatch(/To specify a positional argument|Unknown option '|ERR_PARSE_ARGS/);
    },
    60_000,
  );
});
