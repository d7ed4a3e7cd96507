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
import { request } from "undici";
import * as z from "zod";
import type { CheckinDisplay } from "../../drivers/display/display.js";
import { writeFileAtomic } from "../core/atomicFile.js";
import type { Clock, Timer } from "../core/clock.js";
import { signRequest, type UnitKeyPair } from "../core/fleetAuth.js";
import { UNIT_API } from "../core/fleetWire.js";
import type { Minor } from "../core/money.js";
import type { PlanGate } from "../engine/options.js";
import type { PlanDecision } from "../engine/types.js";
import type { Journal, PlanMember } from "../journal/journal.js";
import {
  type Allowance,
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

/** The day (YYYY-MM-DD) and month (YYYY-MM) of `ms` in `timeZone`: the periods of the allowances. */
export function periodsOf(ms: number, timeZone: string): { day: string; month: string } {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).formatToParts(new Date(ms));
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "";
  const month = `${get("year")}-${get("month")}`;
  return { day: `${month}-${get("day")}`, month };
}

/** True when one more vend at `price` stays within `limit`, given the period's `used` counts. */
export function withinAllowance(
  limit: Allowance,
  used: { items: number; amount: Minor },
  price: Minor,
): boolean {
  if (limit.items !== null && used.items + 1 > limit.items) return false;
  if (limit.amount !== null && used.amount + price > limit.amount) return false;
  return true;
}

export interface GateOptions {
  store: EntitlementStore;
  journal: Pick<Journal, "planUsage">;
  clock: Clock;
  logger: Logger;
  display: CheckinDisplay;
  overAllowance: "pay" | "deny";
  /** How long after a tap the next vend request is the member's, ms. */
  tapWindowMs: number;
  /** True when no sale is in progress (the engine is idle): only then does a tap change the screen. */
  idle: () => boolean;
}

/** A tap waiting for its vend request: a member (ids, hash and limits) or an unknown badge. */
type Armed =
  | { kind: "member"; member: EntitlementMember; timeZone: string; until: number }
  | { kind: "unknown"; until: number };

const SCREEN = {
  hello: "Plan: choose a product",
  unknown: "This badge has no plan at this machine",
  overDeny: (period: string) => `Your plan's allowance is used up ${period}`,
  overPay: (period: string) => `Plan allowance used up ${period}: pay with the app`,
  idle: "Choose a product",
} as const;

/**
 * The member gate (engine PlanGate): a badge tap arms it for `tapWindowMs`; the next vend request taken
 * while the engine is idle asks `decide`, which consumes the tap. Within the member's day and month
 * allowances (the journal's counts, in the list's time zone) → a plan vend (`grant`); over them or badge
 * unknown → the normal payment flow (`overAllowance: pay`, null) or a denial with a clear message (`deny`).
 */
export class MemberGate implements PlanGate {
  private armed: Armed | null = null;
  private expiry: Timer | null = null;

  constructor(private readonly o: GateOptions) {}

  /**
   * A badge that is not a technician's was tapped. `normalisedUid` is used for the one hash and dropped.
   * Returns what the tap armed (for the log and tests): `member`, `unknown`, or `noList` (no list in force:
   * nothing armed, the normal flow).
   */
  async tap(normalisedUid: string): Promise<"member" | "unknown" | "noList"> {
    if (this.o.store.current() === null) {
      this.o.logger.info("badge tap: no entitlement list in force; normal payment flow");
      return "noList";
    }
    const found = await this.o.store.lookup(normalisedUid);
    const until = this.o.clock.now() + this.o.tapWindowMs;
    this.expiry?.cancel();
    this.expiry = this.o.clock.setTimer(this.o.tapWindowMs, () => this.expire());
    if (found === null) {
      this.armed = { kind: "unknown", until };
      this.o.logger.info("badge tap: not on the entitlement list");
      if (this.o.overAllowance === "deny") this.screen(SCREEN.unknown);
      return "unknown";
    }
    const { member, list } = found;
    this.armed = { kind: "member", member, timeZone: list.timeZone, until };
    this.o.logger.info(
      { memberId: member.memberId, planId: member.planId, badge: member.badge },
      "badge tap: member",
    );
    this.screen(SCREEN.hello);
    return "member";
  }

  decide(item: number, price: Minor): PlanDecision | null {
    const armed = this.armed;
    const now = this.o.clock.now();
    this.disarm();
    if (armed === null || now >= armed.until) return null;
    if (armed.kind === "unknown")
      return this.o.overAllowance === "deny" ? { kind: "deny", message: SCREEN.unknown } : null;
    const { member } = armed;
    // The list may have expired (or been replaced without the member) since the tap.
    const list = this.o.store.current();
    if (list === null || now >= member.validTo || !list.members.some((m) => m.memberId === member.memberId)) {
      this.o.logger.info(
        { memberId: member.memberId },
        "plan vend not possible: no list in force for the member",
      );
      return null;
    }
    const { day, month } = periodsOf(now, armed.timeZone);
    const usedDay = this.o.journal.planUsage(member.memberId, day);
    const usedMonth = this.o.journal.planUsage(member.memberId, month);
    const over = !withinAllowance(member.perDay, usedDay, price)
      ? "today"
      : !withinAllowance(member.perMonth, usedMonth, price)
        ? "this month"
        : null;
    const who = { memberId: member.memberId, planId: member.planId, item, price };
    if (over !== null) {
      this.o.logger.info({ ...who, over, policy: this.o.overAllowance }, "plan allowance used up");
      if (this.o.overAllowance === "deny") return { kind: "deny", message: SCREEN.overDeny(over) };
      this.o.display.show({ kind: "idle", checkinUri: null, message: SCREEN.overPay(over) });
      return null;
    }
    this.o.logger.info(who, "plan vend granted");
    const granted: PlanMember = {
      memberId: member.memberId,
      planId: member.planId,
      badge: member.badge,
      day,
      month,
    };
    return { kind: "grant", member: granted };
  }

  private disarm(): void {
    this.armed = null;
    this.expiry?.cancel();
    this.expiry = null;
  }

  /** The tap window passed without a vend request: the greeting goes. */
  private expire(): void {
    this.armed = null;
    this.expiry = null;
    this.screen(SCREEN.idle);
  }

  private screen(message: string): void {
    if (this.o.idle()) this.o.display.show({ kind: "idle", checkinUri: null, message });
  }
}

export type FetchResult =
  | { status: "updated"; list: EntitlementList; etag: string | null }
  | { status: "unchanged" }
  | { status: "none" };

/**
 * `GET /api/unit/v1/entitlements` from the fleet (conditional on `etag`), signed with the unit's key, and
 * installs a new list into `store` (verified there: a list the fleet sends is trusted no more than a file).
 * Throws on a network error, an HTTP error status, a malformed body, or a list `install` refuses
 * (EntitlementError / StaleListError): the list in force stays. The fleet link calls it when the heartbeat's
 * `entitlementsEtag` differs from the one it holds.
 */
export async function fetchEntitlements(
  baseUrl: string,
  signer: { key: UnitKeyPair; clock: Clock },
  etag: string | null,
  store: EntitlementStore,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<FetchResult> {
  const path = `${UNIT_API}/entitlements`;
  const url = new URL(path, baseUrl);
  const headers: Record<string, string> = signRequest(signer.key, "GET", path, "", signer.clock.now());
  if (etag !== null) headers["if-none-match"] = etag;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const res = await request(url, {
    method: "GET",
    headers,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    ...(opts.signal === undefined ? {} : { signal: opts.signal }),
  });
  if (res.statusCode === 304) {
    await res.body.dump();
    return { status: "unchanged" };
  }
  if (res.statusCode === 404) {
    await res.body.dump();
    return { status: "none" };
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new Error(`GET ${path}: HTTP ${res.statusCode}`);
  }
  const body = SignedList.safeParse(await res.body.json());
  if (!body.success) throw new EntitlementError("malformed", `GET ${path}: the body is not a signed list`);
  const list = store.install(body.data.document, body.data.signature);
  const tag = res.headers.etag;
  return { status: "updated", list, etag: typeof tag === "string" ? tag : null };
}
