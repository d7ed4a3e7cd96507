/**
 * The minisign formats against the `minisign` tool (reliability.md §4.1): keys, signatures and encrypted
 * secret keys made by either side work with the other. Tests that need the tool skip when it is missing.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blake2b as nobleBlake2b } from "@noble/hashes/blake2b";
import { describe, expect, it } from "vitest";
import {
  decryptSecretKey,
  formatSignature,
  generateKeys,
  KDF_INTERACTIVE,
  KDF_SENSITIVE,
  keyIdHex,
  MinisignError,
  parsePublicKey,
  parseSignature,
  scryptParams,
  signData,
  verifySignature,
} from "./minisign.js";

const HAVE_MINISIGN = spawnSync("minisign", ["-v"]).status === 0;
const withTool = HAVE_MINISIGN ? it : it.skip;
if (!HAVE_MINISIGN) console.warn("minisign not installed: the interop tests are skipped (CI installs it)");

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "vendd-minisign-"));
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof MinisignError) return err.code;
    throw err;
  }
  return "none";
}

/** BLAKE2b with a chosen output length, as the checksum uses it (@noble/hashes). */
const blake2b = (data: Uint8Array, outLen: number): Buffer =>
  Buffer.from(nobleBlake2b(data, { dkLen: outLen }));

describe("key ids", () => {
  it("prints as minisign does: upper-case hex of the little-endian id, without leading zeros", () => {
    expect(keyIdHex(Buffer.from([0xdd, 0x78, 0x37, 0x50, 0x7a, 0x10, 0x28, 0x02]))).toBe("228107A503778DD");
    expect(keyIdHex(Buffer.from([0xdd, 0x78, 0x37, 0x50, 0x7a, 0x10, 0x28, 0x92]))).toBe("9228107A503778DD");
    expect(keyIdHex(Buffer.alloc(8))).toBe("0");
  });
});

describe("BLAKE2b", () => {
  it("matches RFC 7693's BLAKE2b-512 of 'abc' and Node's digest at block boundaries", () => {
    expect(blake2b(Buffer.from("abc"), 64).toString("hex")).toBe(
      "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
    );
    for (const n of [0, 1, 127, 128, 129, 256, 1000]) {
      const data = Buffer.alloc(n, n & 0xff);
      expect(blake2b(data, 64).equals(createHash("blake2b512").update(data).digest()), `${n} bytes`).toBe(
        true,
      );
    }
  });

  it("BLAKE2b-256 is its own function, not a truncated BLAKE2b-512 (libsodium's vector for '')", () => {
    expect(blake2b(Buffer.alloc(0), 32).toString("hex")).toBe(
      "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8",
    );
  });
});

describe("scrypt parameters (libsodium pickparams)", () => {
  it("maps minisign's sensitive and libsodium's interactive limits to N, r, p", () => {
    expect(scryptParams(KDF_SENSITIVE)).toEqual({ N: 2 ** 20, r: 8, p: 1 });
    expect(scryptParams(KDF_INTERACTIVE)).toEqual({ N: 2 ** 14, r: 8, p: 1 });
    // opslimit below memlimit/32: N from opslimit.
    expect(scryptParams({ opslimit: 32768, memlimit: 1 << 30 })).toEqual({ N: 2 ** 10, r: 8, p: 1 });
    // opslimit above: p grows.
    expect(scryptParams({ opslimit: 1 << 26, memlimit: 1 << 24 })).toEqual({ N: 2 ** 14, r: 8, p: 128 });
  });
});

describe("vendd keys and signatures", () => {
  it("signs and verifies; refuses a changed byte, a changed trusted comment, another key, a wrong passphrase", async () => {
    const a = await generateKeys("pw-a", KDF_INTERACTIVE);
    const b = await generateKeys("pw-b", KDF_INTERACTIVE);
    const skA = await decryptSecretKey(a.secretKeyText, "pw-a");
    const pkA = parsePublicKey(a.publicKeyText);
    const pkB = parsePublicKey(b.publicKeyText);
    const data = Buffer.from("the payload");
    const sig = parseSignature(formatSignature(signData(data, skA, "version=3")));
    expect(sig.algorithm).toBe("ED");
    verifySignature(data, sig, pkA);
    expect(code(() => verifySignature(Buffer.from("the paylobd"), sig, pkA))).toBe("bad_signature");
    expect(code(() => verifySignature(data, { ...sig, trustedComment: "version=4" }, pkA))).toBe(
      "bad_trusted_comment",
    );
    expect(code(() => verifySignature(data, sig, pkB))).toBe("unknown_key");
    await expect(decryptSecretKey(a.secretKeyText, "wrong")).rejects.toMatchObject({
      code: "wrong_passphrase",
    });
    expect(code(() => parseSignature("untrusted comment: x\nnot base64!\n"))).toBe("malformed_signature");
    expect(code(() => parsePublicKey("RWQ"))).toBe("malformed_public_key");
  });
});

describe("interop with the minisign tool", () => {
  withTool(
    "a file signed by minisign verifies in vendd; one signed by vendd verifies with minisign -V",
    async () => {
      const dir = tmp();
      const keys = await generateKeys("vendd pass", KDF_INTERACTIVE);
      writeFileSync(join(dir, "k.pub"), keys.publicKeyText);
      writeFileSync(join(dir, "k.key"), keys.secretKeyText);
      writeFileSync(join(dir, "file"), "some bytes\n");
      // minisign decrypts vendd's encrypted secret key and signs with it.
      execFileSync(
        "minisign",
        ["-S", "-s", join(dir, "k.key"), "-m", join(dir, "file"), "-t", "from the tool"],
        {
          input: "vendd pass\n",
          stdio: ["pipe", "ignore", "ignore"],
        },
      );
      const toolSig = parseSignature(readFileSync(join(dir, "file.minisig"), "utf8"));
      const pk = parsePublicKey(readFileSync(join(dir, "k.pub"), "utf8"));
      verifySignature(readFileSync(join(dir, "file")), toolSig, pk);
      expect(toolSig.trustedComment).toBe("from the tool");

      const sk = await decryptSecretKey(keys.secretKeyText, "vendd pass");
      writeFileSync(
        join(dir, "file.v.minisig"),
        formatSignature(signData(readFileSync(join(dir, "file")), sk, "from vendd")),
      );
      const out = execFileSync(
        "minisign",
        ["-V", "-p", join(dir, "k.pub"), "-m", join(dir, "file"), "-x", join(dir, "file.v.minisig")],
        {
          encoding: "utf8",
        },
      );
      expect(out).toContain("Trusted comment: from vendd");
      // minisign refuses a changed file with vendd's signature too.
      writeFileSync(join(dir, "file"), "some bytes!\n");
      const bad = spawnSync("minisign", [
        "-V",
        "-p",
        join(dir, "k.pub"),
        "-m",
        join(dir, "file"),
        "-x",
        join(dir, "file.v.minisig"),
      ]);
      expect(bad.status).not.toBe(0);
    },
  );

  withTool(
    "vendd decrypts a secret key minisign -G made (scrypt N=2^20, 1 GiB) and prints the same key id",
    async () => {
      const dir = tmp();
      execFileSync("minisign", ["-G", "-p", join(dir, "t.pub"), "-s", join(dir, "t.key")], {
        input: "tool pass\ntool pass\n",
        stdio: ["pipe", "ignore", "ignore"],
      });
      const pubText = readFileSync(join(dir, "t.pub"), "utf8");
      const pk = parsePublicKey(pubText);
      expect(pubText).toContain(`minisign public key ${keyIdHex(pk.keyId)}`);
      const sk = await decryptSecretKey(readFileSync(join(dir, "t.key"), "utf8"), "tool pass");
      expect(sk.publicKey.raw.equals(pk.raw)).toBe(true);
      const data = Buffer.from("x");
      verifySignature(data, signData(data, sk, "ok"), pk);
    },
    180_000,
  );
});
