/**
 * The built `vendd keys` and `vendd bundle` commands end to end: generate a key pair, create, sign and
 * verify a bundle, and the same with the minisign tool on either side (skipped when it is missing).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rawV10 } from "../../src/config/fixtures.test-support.js";
import { vendd } from "../support/cli.js";

const HAVE_MINISIGN = spawnSync("minisign", ["-v"]).status === 0;
if (!HAVE_MINISIGN)
  console.warn("minisign not installed: the CLI interop steps are skipped (CI installs it)");

function configWith(dir: string, keyLines: string[], name: string): string {
  const raw = rawV10();
  raw.unit = { id: "vm-0001", name };
  raw.updates = {
    publicKeys: keyLines,
    fleet: "fleet-a",
    stateDir: join(dir, "state"),
    releaseRoot: join(dir, "opt"),
  };
  const file = join(dir, `${name.replace(/\W/g, "")}.yaml`);
  writeFileSync(file, JSON.stringify(raw));
  return file;
}

describe("vendd keys generate and vendd bundle create|sign|verify", () => {
  it("makes keys, a bundle, signs and verifies it; refuses a wrong key and a wrong passphrase", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-bcli-"));
    const pass = join(dir, "pass");
    writeFileSync(pass, "a long passphrase\n");
    const gen = await vendd([
      "keys",
      "generate",
      "--out-dir",
      join(dir, "k"),
      "--passphrase-file",
      pass,
      "--kdf",
      "interactive",
    ]);
    expect(gen.code, gen.stderr).toBe(0);
    // Issue 43: one line on stderr before the key derivation, so the wait is not taken for a hang.
    expect(gen.stderr).toBe(
      "vendd keys: deriving the key from the passphrase (scrypt, 16 MiB: about a second)...\n",
    );
    const line = /updates\.publicKeys entry: (RW\S+)/.exec(gen.stdout)?.[1] ?? "";
    expect(line).toMatch(/^RW/);
    expect(statSync(join(dir, "k", "vendd.key")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, "k", "vendd.pub"), "utf8")).toContain(line);
    const again = await vendd(["keys", "generate", "--out-dir", join(dir, "k"), "--passphrase-file", pass]);
    expect(again.code).toBe(1);

    const unit = configWith(dir, [line], "Unit");
    const next = configWith(dir, [line], "Next");
    const bundle = join(dir, "b.vbundle");
    const created = await vendd([
      "bundle",
      "create",
      "--config",
      next,
      "--version",
      "7",
      "--targets",
      "fleet-a,vm-0002",
      "--expires",
      "2099-06-30",
      "--out",
      bundle,
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(
      /^vendd-bundle\/1 id=[0-9a-f]{16} kind=config version=7 expires=2099-06-30T23:59:59Z targets=fleet-a,vm-0002\n$/,
    );

    const unsignedVerify = await vendd(["bundle", "verify", bundle, "--config", unit]);
    expect(unsignedVerify).toMatchObject({ code: 1 });
    expect(unsignedVerify.stderr).toContain("[unsigned]");

    const wrongPass = join(dir, "wrong");
    writeFileSync(wrongPass, "not it\n");
    const bad = await vendd([
      "bundle",
      "sign",
      bundle,
      "--secret-key",
      join(dir, "k", "vendd.key"),
      "--passphrase-file",
      wrongPass,
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("[wrong_passphrase]");

    const signed = await vendd([
      "bundle",
      "sign",
      bundle,
      "--secret-key",
      join(dir, "k", "vendd.key"),
      "--passphrase-file",
      pass,
    ]);
    expect(signed.code, signed.stderr).toBe(0);
    expect(signed.stderr).toBe(
      "vendd bundle: deriving the key from the passphrase (scrypt, as the key was made: up to a minute on a Pi)...\n",
    );
    const ok = await vendd(["bundle", "verify", bundle, "--config", unit]);
    expect(ok.code, ok.stderr).toBe(0);
    // minisign writes a key ID without leading zeros (1 key in 16 has 15 digits): take it from the public key file.
    const keyId = /minisign public key ([0-9A-F]{1,16})\n/.exec(
      readFileSync(join(dir, "k", "vendd.pub"), "utf8"),
    )?.[1];
    expect(keyId).toBeDefined();
    expect(ok.stdout).toBe(
      `ok: version 7 (config) for fleet-a, vm-0002, expires 2099-06-30 (end of day, UTC), signed by ${keyId}\n`,
    );
    const byPub = await vendd([
      "bundle",
      "verify",
      bundle,
      "--public-key",
      join(dir, "k", "vendd.pub"),
      "--json",
    ]);
    expect(JSON.parse(byPub.stdout)).toMatchObject({ ok: true, version: 7, expired: false });

    // Another key pair is not trusted by the unit.
    await vendd([
      "keys",
      "generate",
      "--out-dir",
      join(dir, "k2"),
      "--passphrase-file",
      pass,
      "--kdf",
      "interactive",
    ]);
    const other = join(dir, "other.vbundle");
    await vendd([
      "bundle",
      "create",
      "--config",
      next,
      "--version",
      "8",
      "--targets",
      "vm-0001",
      "--expires",
      "2099-01-01",
      "--out",
      other,
    ]);
    await vendd([
      "bundle",
      "sign",
      other,
      "--secret-key",
      join(dir, "k2", "vendd.key"),
      "--passphrase-file",
      pass,
    ]);
    const foreign = await vendd(["bundle", "verify", other, "--config", unit]);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain("[unknown_key]");

    if (!HAVE_MINISIGN) return;
    // minisign -V verifies vendd's signature on the extracted payload.
    execFileSync("tar", ["-xf", bundle, "-C", dir]);
    const v = spawnSync(
      "minisign",
      [
        "-V",
        "-p",
        join(dir, "k", "vendd.pub"),
        "-m",
        join(dir, "payload.tar"),
        "-x",
        join(dir, "signatures", "1.minisig"),
      ],
      {
        encoding: "utf8",
      },
    );
    expect(v.status, v.stderr).toBe(0);
    // minisign signs with vendd's key; vendd attaches and verifies that signature.
    const toolBundle = join(dir, "tool.vbundle");
    const made = await vendd([
      "bundle",
      "create",
      "--config",
      next,
      "--version",
      "9",
      "--targets",
      "fleet-a",
      "--expires",
      "2099-01-01",
      "--out",
      toolBundle,
    ]);
    const tdir = mkdtempSync(join(tmpdir(), "vendd-bcli-tool-"));
    execFileSync("tar", ["-xf", toolBundle, "-C", tdir, "payload.tar"]);
    execFileSync(
      "minisign",
      ["-S", "-s", join(dir, "k", "vendd.key"), "-m", join(tdir, "payload.tar"), "-t", made.stdout.trim()],
      {
        input: "a long passphrase\n",
        stdio: ["pipe", "ignore", "ignore"],
      },
    );
    const attached = await vendd([
      "bundle",
      "sign",
      toolBundle,
      "--attach",
      join(tdir, "payload.tar.minisig"),
    ]);
    expect(attached.code, attached.stderr).toBe(0);
    const toolOk = await vendd(["bundle", "verify", toolBundle, "--config", unit]);
    expect(toolOk.code, toolOk.stderr).toBe(0);
    // A minisign signature of one bundle cannot be attached to another.
    const wrongAttach = await vendd(["bundle", "sign", other, "--attach", join(tdir, "payload.tar.minisig")]);
    expect(wrongAttach.code).toBe(1);
    expect(wrongAttach.stderr).toContain("[another_file]");
  }, 120_000);
});
