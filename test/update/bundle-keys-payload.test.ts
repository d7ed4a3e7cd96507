/**
 * The built `vendd bundle` with what people really hand it: a minisign key made without a passphrase
 * (`minisign -G -W`), a signed payload holding a member it should not (`../x`), and `verify --public-key`
 * with a key that did not sign (the refusal names the key file, not the unit's setting).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { rawV10 } from "../../src/config/fixtures.test-support.js";
import { addSignature, createBundle, readBundle, trustedCommentOf } from "../../src/update/bundle.js";
import { formatSignature, signData } from "../../src/update/minisign.js";
import { readTar, writeTar } from "../../src/update/tar.js";
import { makeKey } from "../../src/update/update.test-support.js";
import { vendd } from "../support/cli.js";

const HAVE_MINISIGN = spawnSync("minisign", ["-v"]).status === 0;

let dir = "";
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function unitConfig(keyLine: string): string {
  const raw = rawV10();
  raw.unit = { id: "vm-0001", name: "Unit" };
  raw.updates = {
    publicKeys: [keyLine],
    fleet: "fleet-a",
    stateDir: join(dir, "state"),
    releaseRoot: join(dir, "opt"),
  };
  const file = join(dir, "unit.yaml");
  writeFileSync(file, JSON.stringify(raw));
  return file;
}

describe("vendd bundle: keys and payloads from outside", () => {
  it.skipIf(!HAVE_MINISIGN)(
    "signs with an unencrypted minisign key (minisign -G -W), no passphrase asked",
    async () => {
      dir = mkdtempSync(join(tmpdir(), "vendd-bkp-"));
      const pub = join(dir, "k.pub");
      const key = join(dir, "k.key");
      execFileSync("minisign", ["-G", "-W", "-p", pub, "-s", key], { stdio: "ignore" });
      const line = readFileSync(pub, "utf8").trim().split("\n")[1] ?? "";
      const config = unitConfig(line);
      const bundle = join(dir, "b.vbundle");
      const made = await vendd([
        "bundle",
        "create",
        "--config",
        config,
        "--version",
        "3",
        "--targets",
        "fleet-a",
        "--expires",
        "2099-01-01",
        "--out",
        bundle,
      ]);
      expect(made.code, made.stderr).toBe(0);
      const signed = await vendd(["bundle", "sign", bundle, "--secret-key", key]);
      expect(signed.stderr).toBe("");
      expect(signed).toMatchObject({ code: 0, stdout: `signed ${bundle}\n` });
      const ok = await vendd(["bundle", "verify", bundle, "--config", config]);
      expect(ok.code, ok.stderr).toBe(0);
      // minisign itself accepts the signature on the extracted payload.
      execFileSync("tar", ["-xf", bundle, "-C", dir]);
      const v = spawnSync(
        "minisign",
        ["-V", "-p", pub, "-m", join(dir, "payload.tar"), "-x", join(dir, "signatures", "1.minisig")],
        { encoding: "utf8" },
      );
      expect(v.status, v.stderr).toBe(0);
      // A damaged unencrypted key is still refused (its public half no longer matches its seed).
      const text = readFileSync(key, "utf8").split("\n");
      const bytes = Buffer.from(text[1] ?? "", "base64");
      bytes[70] = (bytes[70] ?? 0) ^ 1;
      writeFileSync(key, `${text[0]}\n${bytes.toString("base64")}\n`);
      const again = join(dir, "c.vbundle");
      await vendd(
        ["bundle", "create", "--config", config, "--version", "4", "--targets", "fleet-a"].concat([
          "--expires",
          "2099-01-01",
          "--out",
          again,
        ]),
      );
      const damaged = await vendd(["bundle", "sign", again, "--secret-key", key]);
      expect(damaged.code).toBe(1);
      expect(damaged.stderr).toContain("[malformed_secret_key]");
    },
    60_000,
  );

  it("refuses a signed payload holding a member other than the documented ones (../x)", async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-bkp-"));
    const k = await makeKey();
    const { bundle, manifest } = createBundle({
      configText: "unit: { id: vm-0001 }\n",
      version: 5,
      targets: ["fleet-a"],
      expires: "2099-01-01",
    });
    // The payload again, with one more member, made by GNU tar (vendd's own writer refuses such names).
    const parts = join(dir, "parts");
    execFileSync("mkdir", ["-p", parts]);
    for (const e of readTar(readBundle(bundle).payload)) writeFileSync(join(parts, e.name), e.data);
    writeFileSync(join(parts, "x"), "not part of a bundle\n");
    const payload = execFileSync("tar", [
      "-cf",
      "-",
      "-P",
      "--format=ustar",
      "--transform=s,^x$,../x,",
      "-C",
      parts,
      "manifest.json",
      "config.yaml",
      "x",
    ]);
    const sig = formatSignature(signData(payload, k.sk, trustedCommentOf(manifest)));
    const file = join(dir, "odd.vbundle");
    writeFileSync(file, addSignature(writeTar([{ name: "payload.tar", data: payload }]), sig));
    const pub = join(dir, "k.pub");
    writeFileSync(pub, k.publicKeyText);
    const r = await vendd(["bundle", "verify", file, "--public-key", pub]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unexpected payload member "../x"');
  });

  it("verify --public-key with a key that did not sign names the key file, not updates.publicKeys", async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-bkp-"));
    const [signer, other] = await Promise.all([makeKey(), makeKey()]);
    const { bundle, manifest } = createBundle({
      configText: "unit: { id: vm-0001 }\n",
      version: 6,
      targets: ["fleet-a"],
      expires: "2099-01-01",
    });
    const file = join(dir, "b.vbundle");
    const sig = formatSignature(signData(readBundle(bundle).payload, signer.sk, trustedCommentOf(manifest)));
    writeFileSync(file, addSignature(bundle, sig));
    const pub = join(dir, "other.pub");
    writeFileSync(pub, other.publicKeyText);
    const r = await vendd(["bundle", "verify", file, "--public-key", pub]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`which is not in --public-key ${pub}`);
    expect(r.stderr).not.toContain("updates.publicKeys");
    const mine = join(dir, "signer.pub");
    writeFileSync(mine, signer.publicKeyText);
    expect((await vendd(["bundle", "verify", file, "--public-key", mine])).code).toBe(0);
  });
});
