/**
 * The bundle format: signed by vendd or by the minisign tool, and each way a bundle can be wrong refused
 * with its own code (issue 14 acceptance: tampered byte, wrong key, signature over another file, broken
 * trusted comment), plus truncation and the k-of-n threshold for releases.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  addSignature,
  BundleError,
  createBundle,
  parseTrustedComment,
  readBundle,
  trustedCommentOf,
  verifyBundle,
} from "./bundle.js";
import { formatSignature, parsePublicKey, parseSignature, signData } from "./minisign.js";
import { makeKey, signWith, type TestKey } from "./update.test-support.js";

const HAVE_MINISIGN = spawnSync("minisign", ["-v"]).status === 0;
const withTool = HAVE_MINISIGN ? it : it.skip;
if (!HAVE_MINISIGN)
  console.warn("minisign not installed: the bundle interop tests are skipped (CI installs it)");

let k1: TestKey;
let k2: TestKey;
let k3: TestKey;
beforeAll(async () => {
  [k1, k2, k3] = await Promise.all([makeKey("one"), makeKey("two"), makeKey("three")]);
});

const keysOf = (...ks: TestKey[]) => ks.map((k) => parsePublicKey(k.line));

function unsigned(version = 5, release: Buffer | null = null) {
  return createBundle({
    configText: "unit: {id: vm-0001, name: Vending}\n",
    release,
    version,
    targets: ["fleet-a", "vm-0009"],
    expires: "2031-02-03",
  });
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof BundleError) return err.code;
    throw err;
  }
  return "accepted";
}

describe("bundle format", () => {
  it("round-trips: the trusted comment carries id, kind, version, expiry, targets", () => {
    const { bundle, manifest } = unsigned();
    const signed = signWith(bundle, [k1]);
    const v = verifyBundle(signed, { keys: keysOf(k1), releaseThreshold: 1 });
    expect(v.meta).toEqual({
      id: manifest.id,
      kind: "config",
      version: 5,
      targets: ["fleet-a", "vm-0009"],
      expires: "2031-02-03T23:59:59Z",
    });
    expect(v.configText).toContain("vm-0001");
    const sig = parseSignature(readBundle(signed).signatures[0] ?? "");
    expect(sig.trustedComment).toBe(
      `vendd-bundle/1 id=${manifest.id} kind=config version=5 expires=2031-02-03T23:59:59Z targets=fleet-a,vm-0009`,
    );
    expect(parseTrustedComment(sig.trustedComment)).toEqual(v.meta);
  });

  it("refuses each kind of bad bundle with its own code", () => {
    const { bundle } = unsigned();
    const good = signWith(bundle, [k1]);
    const opts = { keys: keysOf(k1), releaseThreshold: 1 };
    expect(refusal(() => verifyBundle(good, opts))).toBe("accepted");
    expect(refusal(() => verifyBundle(bundle, opts))).toBe("unsigned");

    // A tampered byte inside the signed payload (the config text).
    const tampered = Buffer.from(good);
    const at = tampered.indexOf("Vending");
    tampered[at] = "W".charCodeAt(0);
    expect(refusal(() => verifyBundle(tampered, opts))).toBe("bad_signature");

    // Signed by a key the unit does not trust.
    expect(refusal(() => verifyBundle(signWith(bundle, [k2]), opts))).toBe("unknown_key");

    // A valid signature over another bundle's payload, attached to this one.
    const other = signWith(unsigned(6).bundle, [k1]);
    const otherSig = readBundle(other).signatures[0] ?? "";
    expect(refusal(() => verifyBundle(addSignature(bundle, otherSig), opts))).toBe("another_file");

    // The trusted comment edited after signing (version 5 → 9).
    const sigText = readBundle(good).signatures[0] ?? "";
    const edited = sigText.replace("version=5", "version=9");
    expect(edited).not.toBe(sigText);
    expect(refusal(() => verifyBundle(addSignature(bundle, edited), opts))).toBe("bad_trusted_comment");

    // A trusted comment that verifies but is not a vendd description (a plain `minisign -S`).
    const plain = formatSignature(
      signData(readBundle(bundle).payload, k1.sk, "timestamp:1 file:payload.tar"),
    );
    expect(refusal(() => verifyBundle(addSignature(bundle, plain), opts))).toBe("bad_trusted_comment");

    // Truncated anywhere: never read as a shorter bundle.
    for (const cut of [10, 600, good.length - 1024, good.length - 1]) {
      expect(
        refusal(() => verifyBundle(good.subarray(0, cut), opts)),
        `cut at ${cut}`,
      ).toBe("truncated");
    }
    expect(refusal(() => verifyBundle(Buffer.from("not a bundle at all".repeat(40)), opts))).toBe(
      "not_a_bundle",
    );
  });

  it("a release needs the threshold of distinct trusted keys; a config needs one", () => {
    const release = unsigned(7, Buffer.from("fake tarball"));
    const opts = { keys: keysOf(k1, k2, k3), releaseThreshold: 2 };
    expect(refusal(() => verifyBundle(signWith(release.bundle, [k1]), opts))).toBe("threshold");
    expect(refusal(() => verifyBundle(signWith(release.bundle, [k1, k2]), opts))).toBe("accepted");
    // An untrusted second signature does not count.
    const withForeign = signWith(release.bundle, [k1]);
    const foreign = plusUntrustedK2(withForeign);
    expect(refusal(() => verifyBundle(foreign, { keys: keysOf(k1, k3), releaseThreshold: 2 }))).toBe(
      "threshold",
    );
    expect(refusal(() => verifyBundle(signWith(unsigned(8).bundle, [k1]), opts))).toBe("accepted");
    // The same key twice is refused when signing.
    expect(refusal(() => signWith(signWith(release.bundle, [k1]), [k1]))).toBe("bad_request");
  });
});

/** Adds a k2 signature (k2 is not trusted in the check that uses it). */
function plusUntrustedK2(bundle: Buffer): Buffer {
  return signWith(bundle, [k2]);
}

describe("bundle interop with the minisign tool", () => {
  withTool("minisign -V verifies vendd's signature on payload.tar extracted with tar", () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-bundle-"));
    writeFileSync(join(dir, "k.pub"), k1.publicKeyText);
    writeFileSync(join(dir, "b.vbundle"), signWith(unsigned().bundle, [k1]));
    execFileSync("tar", ["-xf", join(dir, "b.vbundle"), "-C", dir]);
    const out = execFileSync(
      "minisign",
      [
        "-V",
        "-p",
        join(dir, "k.pub"),
        "-m",
        join(dir, "payload.tar"),
        "-x",
        join(dir, "signatures", "1.minisig"),
      ],
      { encoding: "utf8" },
    );
    expect(out).toContain("Trusted comment: vendd-bundle/1 ");
  });

  withTool("a signature the minisign tool made, attached to the bundle, verifies in vendd", () => {
    const dir = mkdtempSync(join(tmpdir(), "vendd-bundle-"));
    writeFileSync(join(dir, "k.key"), k1.secretKeyText);
    const { bundle, manifest } = unsigned();
    writeFileSync(join(dir, "payload.tar"), readBundle(bundle).payload);
    execFileSync(
      "minisign",
      ["-S", "-s", join(dir, "k.key"), "-m", join(dir, "payload.tar"), "-t", trustedCommentOf(manifest)],
      { input: `${k1.passphrase}\n`, stdio: ["pipe", "ignore", "ignore"] },
    );
    const signed = addSignature(bundle, readFileSync(join(dir, "payload.tar.minisig"), "utf8"));
    const v = verifyBundle(signed, { keys: keysOf(k1), releaseThreshold: 1 });
    expect(v.meta.id).toBe(manifest.id);
  });
});
