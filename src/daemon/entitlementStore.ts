/**
 * Member entitlements at the unit (issue 18): the signed entitlement list the fleet sends, kept on disk and
 * verified with the entitlement key the config names (never a config or release key), and the member gate
 * that turns a badge tap into a plan-vend decision for the next vend request. The decision is local: a
 * list in force (verified, not expired) and the journal's usage counts; no network in that path.
 *
 * A badge's UID never leaves this module's call that hashes it: the store is given the normalised UID only
 * inside `lookup` (one scrypt per tap, with the list's badge salt) and keeps, logs and journals the hash
 * and the member id only.
 */
import { createHash } from "node:crypto";
import { type FSWatcher, readFileSync, watch } from "node:fs";
import { basename, dirname } from "node:path";
import type { Logger } from "pino";
import * as z from "zod";
import { writeFileAtomic } from "../core/atomicFile.js";
import type { Clock } from "../core/clock.js";
import {
  badgeHashAsync,
  EntitlementError,
  type EntitlementList,
  type EntitlementMember,
  verifyEntitlements,
} from "../update/entitlements.js";
import { type PublicKey, parsePublicKey } from "../update/minisign.js";

/** The list file and the `GET /entitlements` body: the signed document and its minisign signature. */
export const SignedList = z.object({
  document: z
    .string()
    .min(1)
    .max(64 * 1024 * 1024),
  signature: z.string().min(1).max(4096),
});
export type SignedList = z.infer<typeof SignedList>;

/** Reads the entitlement public key: the config's key line, or the `.pub` file it names. */
export function loadEntitlementKey(configured: string): PublicKey {
  return parsePublicKey(configured.startsWith("/") ? readFileSync(configured, "utf8") : configured);
}

/** A list refused by `install`: its serial is not above the one in force. */
export class StaleListError extends Error {
  readonly code = "stale";
}

export interface StoreOptions {
  publicKey: PublicKey;
  listFile: string;
  /** This unit's id (`unit.id`): a member is valid here when the member's `units` holds it or `*`. */
  unitId: string;
  clock: Clock;
  logger: Logger;
}

/** The list in force, as verified: the document and signature kept to compare a re-read file. */
interface InForce {
  list: EntitlementList;
  document: string;
  /** SHA-256 of the document (hex): the list's identity in logs (the unit's ETag when it has none). */
  sha256: string;
}

/**
 * The entitlement list in force. `load` reads the list file (at start and when the file changes); a file
 * that does not verify is logged with its code and not used (the previous valid list stays until it
 * expires). An expired list is never used: members fall back to the normal payment flow.
 */
export class EntitlementStore {
  private inForce: InForce | null = null;
  private watcher: FSWatcher | null = null;

  constructor(private readonly o: StoreOptions) {}

  /**
   * Reads and verifies the list file. Returns the code of a refusal (logged), `missing` when there is no
   * file, or null when the file's list is now in force (or already was).
   */
  load(): EntitlementError["code"] | "missing" | "unreadable" | "stale" | null {
    let text: string;
    try {
      text = readFileSync(this.o.listFile, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return "missing";
      this.o.logger.warn({ file: this.o.listFile, code }, "entitlement list unreadable; not used");
      return "unreadable";
    }
    let signed: SignedList;
    try {
      signed = SignedList.parse(JSON.parse(text));
    } catch {
      this.o.logger.warn({ file: this.o.listFile, code: "malformed" }, "entitlement list refused");
      return "malformed";
    }
    if (this.inForce?.document === signed.document) return null;
    try {
      this.accept(signed, false);
      return null;
    } catch (err) {
      const code = err instanceof EntitlementError || err instanceof StaleListError ? err.code : "malformed";
      this.o.logger.warn(
        { file: this.o.listFile, code, reason: (err as Error).message },
        "entitlement list refused; the previous list stays in force until it expires",
      );
      return code;
    }
  }

  /**
   * Verifies a list (from the fleet) and, when it is newer than the one in force, writes it atomically to
   * the list file and puts it in force. Throws {@link EntitlementError} (with its code) for a list that
   * does not verify, {@link StaleListError} for one whose serial is not above the one in force.
   */
  install(document: string, signature: string): EntitlementList {
    return this.accept({ document, signature }, true);
  }

  private accept(signed: SignedList, write: boolean): EntitlementList {
    const list = verifyEntitlements(signed.document, signed.signature, this.o.publicKey, this.o.clock.now());
    const held = this.current();
    if (held !== null && list.serial < held.serial)
      throw new StaleListError(`serial ${list.serial} is older than the list in force (${held.serial})`);
    if (held !== null && list.serial === held.serial && this.inForce?.document !== signed.document)
      throw new StaleListError(`serial ${list.serial} is already in force with another document`);
    if (write) writeFileAtomic(this.o.listFile, JSON.stringify(signed), { mode: 0o640 });
    const sha256 = createHash("sha256").update(signed.document).digest("hex");
    if (this.inForce?.document !== signed.document)
      this.o.logger.info(
        { serial: list.serial, members: list.members.length, validUntil: list.validUntil, sha256 },
        "entitlement list in force",
      );
    this.inForce = { list, document: signed.document, sha256 };
    return list;
  }

  /** The list in force now, or null (none, or it expired: then it is dropped and logged once). */
  current(): EntitlementList | null {
    const f = this.inForce;
    if (f === null) return null;
    if (this.o.clock.now() >= f.list.validUntil) {
      this.o.logger.warn(
        { serial: f.list.serial },
        "entitlement list expired; plan vends stop until a new one",
      );
      this.inForce = null;
      return null;
    }
    return f.list;
  }

  /**
   * The member whose badge this is, valid at this unit now, or null. `normalisedUid`: hex as
   * drivers/nfc/badges.ts `normaliseUid` gives it (either case). One scrypt per call.
   */
  async lookup(normalisedUid: string): Promise<{ member: EntitlementMember; list: EntitlementList } | null> {
    const list = this.current();
    if (list === null) return null;
    let hash: string;
    try {
      // On the thread pool: the VMC line is served while scrypt runs.
      hash = await badgeHashAsync(normalisedUid.toUpperCase(), list.badgeSalt);
    } catch {
      return null;
    }
    const now = this.o.clock.now();
    const member = list.members.find(
      (m) =>
        m.badge === hash &&
        now >= m.validFrom &&
        now < m.validTo &&
        (m.units.includes("*") || m.units.includes(this.o.unitId)),
    );
    return member === undefined ? null : { member, list };
  }

  /** Re-reads the list file whenever it changes (a watch on its directory: an atomic write renames). */
  watch(): () => void {
    if (this.watcher !== null) return () => this.unwatch();
    const name = basename(this.o.listFile);
    try {
      this.watcher = watch(dirname(this.o.listFile), (_event, file) => {
        if (file === null || file === name) this.load();
      });
      this.watcher.on("error", (err) => this.o.logger.warn({ err }, "entitlement list watch failed"));
      this.watcher.unref();
    } catch (err) {
      this.o.logger.warn({ err, file: this.o.listFile }, "entitlement list not watched (read at start only)");
    }
    return () => this.unwatch();
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = null;
  }
}
