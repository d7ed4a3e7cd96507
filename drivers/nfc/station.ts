import type { Logger } from "pino";
import type { Clock, Timer } from "../../src/core/clock.js";
import { type BadgeEntry, createBadgeCheck, normaliseUid } from "./badges.js";
import { NfcError } from "./errors.js";
import { encodeNdefUri } from "./ndef.js";
import { type TagIo, writeUriTag } from "./ntag.js";

/** The surface of nfc-pcsc's `NFC` object this station uses (the sim implements it too). */
export interface NfcLike {
  on(event: "reader" | "error", fn: (arg: unknown) => void): unknown;
  close?(): void;
}

/** The surface of an nfc-pcsc `Reader`. `card` carries `{ uid?: string, standard?: string }`. */
export interface ReaderLike extends TagIo {
  readonly name?: string;
  on(event: "card" | "card.off" | "error" | "end", fn: (arg: unknown) => void): unknown;
}

export type NfcKind = "pcsc" | "sim";
export type ReaderState = "connected" | "disconnected" | "degraded";

/** A tap of a card that is a configured technician badge (`name`) or not (`authorized` false). */
export interface BadgeTap {
  authorized: boolean;
  /** The badge owner's configured name; null when unknown. The UID itself is never exposed. */
  name: string | null;
  /**
   * Lends the card's normalised UID (lower-case hex) to `fn` and returns what it returns: for a member's
   * badge hash (issue 18), computed and kept instead of the UID. A non-enumerable function, so logging,
   * spreading or serialising a tap never carries the UID. Absent from stations that cannot lend it.
   */
  withUid?: <T>(fn: (normalisedUid: string) => T) => T;
}

/**
 * The unit's NFC reader: recognises technician badges and, when armed by a technician, writes the
 * check-in URI to the next tag presented (for the sticker on the front of the machine).
 *
 * Failure semantics: a missing module, a missing PC/SC daemon or an unplugged reader never throws: the
 * station reports `degraded` or `disconnected` and picks a reader up again when it is plugged back in
 * (nfc-pcsc emits `reader` again). Only `writeNextTag` rejects, with an `NfcError`. Cards without a UID
 * (ISO 14443-4 cards need an AID in nfc-pcsc) are ignored and logged.
 */
export interface NfcStation {
  readonly kind: NfcKind;
  readerState(): ReaderState;
  /** Why the station is `degraded` (the module could not load, PC/SC failed), or null. */
  reason(): string | null;
  onReaderState(fn: (state: ReaderState) => void): () => void;
  /**
   * Calls `fn` for each tap; what `fn` returns (a promise: the member gate's hash) is waited for before
   * the tap counts as handled and the next card is taken.
   */
  onBadge(fn: (tap: BadgeTap) => unknown): () => void;
  /**
   * Calls `fn` at once when a card is presented (before its UID is hashed), with a promise that settles
   * when that tap has been handled (every `onBadge` handler's promise included): a vend request that comes
   * meanwhile can wait for the tap (issue 31).
   */
  onCardPresented(fn: (handled: Promise<void>) => void): () => void;
  /**
   * Writes `uri` to the next tag that is not a badge, presented within `timeoutMs` (default 60,000), then
   * reads it back. Resolves with the tag's UID.
   */
  writeNextTag(uri: string, timeoutMs?: number): Promise<{ uid: string }>;
  /** The technician badges from a reloaded config (SIGHUP): the next tap is checked against them. */
  setBadges(badges: readonly BadgeEntry[]): void;
  close(): Promise<void>;
}

export interface StationOptions {
  kind: NfcKind;
  /** nfc-pcsc's NFC object, or null when it could not be created (`unavailable` says why). */
  nfc: NfcLike | null;
  unavailable: string;
  /**
   * While `nfc` is null, asks again for nfc-pcsc's object (pcscd not running yet): after 5 s, doubling
   * to 60 s, until it is there or the station is closed. Absent: no retry (a module that cannot load).
   */
  retry?: () => Promise<{ nfc: NfcLike | null; reason: string }>;
  badges: readonly BadgeEntry[];
  clock: Clock;
  logger?: Logger;
}

interface Armed {
  uri: string;
  resolve: (r: { uid: string }) => void;
  reject: (err: NfcError) => void;
  timer: Timer;
}

const RETRY_FIRST_MS = 5000;
const RETRY_MAX_MS = 60_000;

export function createNfcStation(o: StationOptions): NfcStation {
  let isBadge = createBadgeCheck(o.badges);
  const readers = new Set<ReaderLike>();
  const stateFns = new Set<(s: ReaderState) => void>();
  const badgeFns = new Set<(t: BadgeTap) => unknown>();
  const presentedFns = new Set<(handled: Promise<void>) => void>();
  let fault: string | null = o.nfc === null ? o.unavailable : null;
  let nfc: NfcLike | null = o.nfc;
  let armed: Armed | null = null;
  let closed = false;
  let last: ReaderState | null = null;
  let taps: Promise<void> = Promise.resolve();

  const state = (): ReaderState =>
    readers.size > 0 ? "connected" : fault !== null ? "degraded" : "disconnected";
  const changed = () => {
    const s = state();
    if (s === last) return;
    last = s;
    o.logger?.info({ state: s, reason: fault }, "nfc: reader state");
    for (const fn of [...stateFns]) fn(s);
  };

  const takeArmed = () => {
    const job = armed;
    armed = null;
    return job;
  };
  const onCard = (reader: ReaderLike, card: unknown) =>
    handleCard(reader, card, isBadge, badgeFns, takeArmed, o.logger);

  const attach = (reader: unknown) => {
    if (closed || !isReader(reader)) return;
    readers.add(reader);
    // Taps are handled one at a time, in the order the readers reported them.
    reader.on("card", (card) => {
      taps = taps
        .then(() => onCard(reader, card))
        .catch((err: unknown) => o.logger?.error({ err }, "nfc: card handling failed"));
      for (const fn of [...presentedFns]) fn(taps);
    });
    listenForEnd(reader, o.logger, () => {
      readers.delete(reader);
      changed();
    });
    fault = null;
    changed();
  };

  const wire = (n: NfcLike) => {
    n.on("reader", attach);
    n.on("error", (err) => {
      fault = `pcsc: ${err instanceof Error ? err.message : String(err)}`;
      changed();
    });
  };
  const got = (n: NfcLike) => {
    nfc = n;
    fault = null;
    wire(n);
    o.logger?.info("nfc: PC/SC available");
    changed();
  };
  const refused = (reason: string) => {
    fault = reason;
  };
  if (nfc !== null) wire(nfc);
  const retries = nfc === null ? startRetries(o, () => closed, got, refused) : null;
  changed();

  return {
    kind: o.kind,
    readerState: state,
    reason: () => (state() === "degraded" ? fault : null),
    onReaderState: subscriber(stateFns),
    onBadge: subscriber(badgeFns),
    onCardPresented: subscriber(presentedFns),
    writeNextTag(uri, timeoutMs = 60_000) {
      if (closed || armed !== null) {
        return Promise.reject(
          new NfcError("state", closed ? "station closed" : "a tag write is already armed"),
        );
      }
      encodeNdefUri(uri);
      return new Promise((resolve, reject) => {
        const timer = o.clock.setTimer(timeoutMs, () => {
          armed = null;
          reject(new NfcError("timeout", "no tag presented in time"));
        });
        armed = { uri, resolve, reject, timer };
      });
    },
    setBadges(badges) {
      isBadge = createBadgeCheck(badges);
    },
    async close() {
      closed = true;
      retries?.cancel();
      if (armed !== null) {
        armed.timer.cancel();
        armed.reject(new NfcError("state", "station closed"));
        armed = null;
      }
      for (const set of [readers, stateFns, badgeFns, presentedFns]) set.clear();
      closeNfc(nfc, o);
    },
  };
}

/**
 * While nfc-pcsc's object is missing (pcscd not running yet), asks `o.retry` again after 5 s, doubling to
 * 60 s, until it is there (`got`) or the station is closed; each refusal's reason goes to `failed`.
 */
function startRetries(
  o: StationOptions,
  isClosed: () => boolean,
  got: (n: NfcLike) => void,
  failed: (reason: string) => void,
): { cancel(): void } {
  let timer: Timer | null = null;
  const schedule = (delayMs: number) => {
    const retry = o.retry;
    if (retry === undefined || isClosed()) return;
    const again = () => schedule(Math.min(delayMs * 2, RETRY_MAX_MS));
    timer = o.clock.setTimer(delayMs, () => {
      timer = null;
      retry().then(
        (r) => {
          if (isClosed()) return r.nfc?.close?.();
          if (r.nfc === null) {
            failed(r.reason);
            return again();
          }
          got(r.nfc);
        },
        (err: unknown) => {
          o.logger?.warn({ err }, "nfc: PC/SC retry failed");
          again();
        },
      );
    });
  };
  schedule(RETRY_FIRST_MS);
  return { cancel: () => timer?.cancel() };
}

/** `onX(fn)` for a set of listeners: adds `fn`, returns its removal. */
function subscriber<F>(fns: Set<F>): (fn: F) => () => void {
  return (fn) => {
    fns.add(fn);
    return () => {
      fns.delete(fn);
    };
  };
}

/** A tap that is a badge, or any tap while no write is armed: every badge handler, waited for. */
/** A card on a reader: a badge (or any card while no write is armed) is announced, else the armed write runs. */
async function handleCard(
  reader: ReaderLike,
  card: unknown,
  isBadge: (uid: string) => Promise<string | null>,
  badgeFns: Set<(t: BadgeTap) => unknown>,
  takeArmed: () => Armed | null,
  logger: Logger | undefined,
): Promise<void> {
  const raw = typeof card === "object" && card !== null ? (card as { uid?: unknown }).uid : undefined;
  const uid = typeof raw === "string" ? normaliseUid(raw) : null;
  if (uid === null) return logger?.warn("nfc: card without a readable UID ignored");
  const name = await isBadge(uid);
  const job = name === null ? takeArmed() : null;
  if (job === null) return announceTap(badgeFns, uid, name, logger);
  job.timer.cancel();
  await writeArmedTag(reader, job, uid, logger);
}

/** A reader's other events: errors are logged, and its end (unplugged) calls `ended`. */
function listenForEnd(reader: ReaderLike, logger: Logger | undefined, ended: () => void): void {
  reader.on("card.off", () => {});
  reader.on("error", (err) => logger?.warn({ err }, "nfc: reader error"));
  reader.on("end", ended);
}

async function announceTap(
  badgeFns: ReadonlySet<(t: BadgeTap) => unknown>,
  uid: string,
  name: string | null,
  logger: Logger | undefined,
): Promise<void> {
  logger?.info({ authorized: name !== null, name }, "nfc: badge tap");
  const withUid = <T>(fn: (normalisedUid: string) => T): T => fn(uid);
  const handling: Promise<unknown>[] = [];
  for (const fn of [...badgeFns]) {
    // Not enumerable: a tap logged, spread or compared carries no trace of the UID.
    const tap: BadgeTap = { authorized: name !== null, name };
    Object.defineProperty(tap, "withUid", { value: withUid, enumerable: false });
    handling.push(Promise.resolve(fn(tap)));
  }
  await Promise.allSettled(handling);
}

/** Writes the armed check-in URI to the tag on `reader` and settles the armed write. */
async function writeArmedTag(
  reader: ReaderLike,
  job: Armed,
  uid: string,
  logger: Logger | undefined,
): Promise<void> {
  try {
    const bytes = await writeUriTag(reader, job.uri);
    logger?.info({ bytes }, "nfc: check-in tag written and verified");
    job.resolve({ uid });
  } catch (err) {
    job.reject(err instanceof NfcError ? err : new NfcError("io", String(err)));
  }
}

/** Closes nfc-pcsc's object, if any; a failure is logged, not thrown. */
function closeNfc(nfc: NfcLike | null, o: StationOptions): void {
  try {
    nfc?.close?.();
  } catch (err) {
    o.logger?.warn({ err }, "nfc: close failed");
  }
}

function isReader(v: unknown): v is ReaderLike {
  if (typeof v !== "object" || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r.on === "function" && typeof r.read === "function" && typeof r.write === "function";
}
