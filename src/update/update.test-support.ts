/** Shared by the update tests: keys, unit configs in a temporary tree, signed bundles, a fast clock. */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rawV10 } from "../config/fixtures.test-support.js";
import type { Clock, Timer } from "../core/clock.js";
import { addSignature, type CreateInput, createBundle, readBundle, trustedCommentOf } from "./bundle.js";
import {
  decryptSecretKey,
  formatSignature,
  generateKeys,
  KDF_INTERACTIVE,
  parsePublicKey,
  publicKeyLine,
  type SecretKey,
  signData,
} from "./minisign.js";

export interface TestKey {
  sk: SecretKey;
  line: string;
  publicKeyText: string;
  secretKeyText: string;
  passphrase: string;
}

/** A key pair with the cheap (interactive) KDF, so tests stay fast. */
export async function makeKey(passphrase = "correct horse"): Promise<TestKey> {
  const g = await generateKeys(passphrase, KDF_INTERACTIVE);
  const sk = await decryptSecretKey(g.secretKeyText, passphrase);
  return {
    sk,
    line: publicKeyLine(parsePublicKey(g.publicKeyText)),
    publicKeyText: g.publicKeyText,
    secretKeyText: g.secretKeyText,
    passphrase,
  };
}

/** Signs an unsigned bundle with each key, as `vendd bundle sign` does. */
export function signWith(bundle: Buffer, keys: readonly TestKey[], comment?: string): Buffer {
  let out = bundle;
  for (const k of keys) {
    const payload = readPayload(out);
    out = addSignature(out, formatSignature(signData(payload.payload, k.sk, comment ?? payload.comment)));
  }
  return out;
}

function readPayload(bundle: Buffer): { payload: Buffer; comment: string } {
  const c = readBundle(bundle);
  return { payload: c.payload, comment: trustedCommentOf(c.manifest) };
}

/** A signed bundle for the test unit. */
export function signedBundle(
  keys: readonly TestKey[],
  input: Partial<CreateInput> & { configText: string },
): Buffer {
  const { bundle } = createBundle({
    version: 2,
    targets: ["fleet-a"],
    expires: "2099-01-01",
    ...input,
  });
  return signWith(bundle, keys);
}

/** A unit tree: config file, state dir, release root, inbox, journal dir (for the control socket). */
export interface UnitTree {
  root: string;
  configFile: string;
  stateDir: string;
  releaseRoot: string;
  inbox: string;
  journalDir: string;
}

export function unitTree(prefix = "vendd-upd-"): UnitTree {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const t: UnitTree = {
    root,
    configFile: join(root, "etc", "config.yaml"),
    stateDir: join(root, "state"),
    releaseRoot: join(root, "opt"),
    inbox: join(root, "inbox"),
    journalDir: join(root, "lib"),
  };
  for (const d of [join(root, "etc"), t.stateDir, t.releaseRoot, t.inbox, t.journalDir])
    mkdirSync(d, { recursive: true });
  return t;
}

/**
 * The text of a valid unit config for `tree` (JSON, which YAML reads): the unit `vm-0001` in fleet
 * `fleet-a`, trusting `keys`. `name` distinguishes versions: it is `payment.v10.clientSystemName`, a value a
 * bundle may change (the unit's own name is identity, which no bundle changes: src/config/identity.ts);
 * `extra` overrides top-level sections.
 */
export function unitConfig(
  tree: UnitTree,
  keys: readonly TestKey[],
  opts: {
    name?: string;
    threshold?: number;
    restartCommand?: string[];
    extra?: Record<string, unknown>;
  } = {},
): string {
  const raw = rawV10();
  raw.unit = { id: "vm-0001", name: "Vending 1" };
  raw.payment.v10 = { ...(raw.payment.v10 as object), clientSystemName: opts.name ?? "Vending 1" };
  raw.journal = { path: join(tree.journalDir, "journal.db") };
  raw.updates = {
    publicKeys: keys.map((k) => k.line),
    threshold: opts.threshold ?? 1,
    fleet: "fleet-a",
    stateDir: tree.stateDir,
    releaseRoot: tree.releaseRoot,
    inbox: tree.inbox,
    restartCommand: opts.restartCommand ?? ["true"],
    health: { holdMs: 300, timeoutMs: 3000, pollMs: 50 },
    pull: { minBackoffMs: 1000, maxBackoffMs: 8000, timeoutMs: 5000 },
  };
  return `${JSON.stringify({ ...raw, ...opts.extra }, null, 2)}\n`;
}

/** A gzip tarball with one file `VERSION` holding `text`: a stand-in for a built release. */
export function releaseTarball(dir: string, text: string): Buffer {
  const src = mkdtempSync(join(dir, "rel-"));
  writeFileSync(join(src, "VERSION"), text);
  return execFileSync("tar", ["-czf", "-", "-C", src, "."]);
}

/** A clock whose sleeps pass at once (time jumps forward): gate timings without waiting. */
export class JumpClock implements Clock {
  constructor(public t = Date.parse("2030-01-01T00:00:00Z")) {}
  now(): number {
    return this.t;
  }
  setTimer(ms: number, fn: () => void): Timer {
    const h = setTimeout(fn, 0);
    this.t += ms;
    return { cancel: () => clearTimeout(h) };
  }
  sleep(ms: number): Promise<void> {
    this.t += ms;
    return Promise.resolve();
  }
}

/** The version name (`unitConfig`'s `name`) of the config in a file. */
export function versionNameIn(configFile: string): string {
  const raw = JSON.parse(readFileSync(configFile, "utf8")) as {
    payment: { v10: { clientSystemName: string } };
  };
  return raw.payment.v10.clientSystemName;
}
