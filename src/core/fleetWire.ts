/**
 * The wire contract between a unit and the fleet server (`vendd fleet serve`): what a unit reports, in
 * which shape, and what the fleet answers. One set of zod schemas serves both ends: the unit's outbox
 * builds these objects, the fleet validates every body with the same schemas (Fastify's validator), so the
 * two cannot drift apart. Money is integer minor units; times are epoch milliseconds.
 *
 * Endpoints (all under `/api/unit/v1`, every request signed by the unit's key, fleetAuth.ts):
 * - `POST /enroll`     body {@link EnrollRequest}  → {@link EnrollResponse}   (202 pending, 200 approved)
 * - `POST /events`     body {@link EventBatch}     → {@link EventAck}
 * - `POST /heartbeat`  body {@link Heartbeat}      → {@link HeartbeatResponse}
 * - `GET  /entitlements` conditional GET of the signed entitlement list for this unit (issue 18): 200 with
 *   `{ document, signature }` (src/update/entitlements.ts) and an `ETag`, 304, or 404.
 * - `GET  /bundle`     conditional GET (`If-None-Match`) of the newest bundle for this unit: 200 with the
 *   bundle's bytes and an `ETag`, 304, or 404 when there is none.
 * - `POST /steps`      body {@link StepReport}     → {@link StepAck}  (issue 41: a bundle's steps on the unit)
 * Refusals are `{ error: { code, message } }` ({@link WireError}) with 400 (malformed), 401 (signature,
 * clock skew, replay), 403 (unit not approved or revoked), 409 (a unit id claimed by another key).
 */
import * as z from "zod";

/** Path prefix of the unit-facing API. */
export const UNIT_API = "/api/unit/v1";

/**
 * The fleet's bundle address for a unit whose fleet is at `fleetUrl` (config `fleet.url`): what
 * `vendd bundle pull` fetches when `updates.pullUrl` is not set, and what the docs tell managers to set it
 * to. One address for every unit: the fleet answers each signed GET with that unit's bundle.
 */
export function fleetBundleUrl(fleetUrl: string): string {
  return `${fleetUrl.replace(/\/+$/, "")}${UNIT_API}/bundle`;
}

/** Most events in one batch a unit sends, and that the fleet accepts. */
export const MAX_BATCH_EVENTS = 500;

/**
 * The largest amount a unit can be configured to take, in minor units: the payment service's exact JSON
 * amounts end below 10^13 (src/config/schema-price.ts SERVICE_MAX_AMOUNT_MINOR, the bound of
 * `engine.maxPrice` and of a session's reserved amount). No session, vend or refund amount exceeds it.
 */
export const MAX_SESSION_AMOUNT = 10 ** 13 - 1;

/** A session's amounts: within the largest price a unit can be configured for (issue 30). */
const amount = z.number().int().nonnegative().max(MAX_SESSION_AMOUNT);
const epochMs = z.number().int().nonnegative().max(8.64e15);
/** Printable text of bounded length: ids, reasons, codes (never a secret). */
const text = (max: number) => z.string().max(max);
const id = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, "letters, digits and . _ : - only");

/** One vend within a session, in approval order. */
export const WireVend = z.strictObject({
  item: z.number().int().nonnegative().max(65535),
  price: amount,
  outcome: z.enum(["success", "failure", "unknown", "cancelled"]).nullable(),
});
export type WireVend = z.infer<typeof WireVend>;

/**
 * A finished session (closed with a result): written to the outbox in the transaction that closes it.
 * `captured` is what the service was asked to capture and confirmed; `refunded` what was refunded after.
 * The relations a real session keeps are checked too (issue 30): captured ≤ approved ≤ price, refunded ≤
 * captured, closed at or after opened; a batch holding a session that breaks one is refused whole.
 */
export const SessionData = z
  .strictObject({
    sessionId: id,
    orderId: id,
    /** The service's payment (or transaction) id, once known. */
    paymentId: text(128).nullable(),
    /** Which point-of-sale interface took the payment. */
    driver: z.enum(["v10", "legacy", "sim", "plan"]),
    flow: z.enum(["selection", "checkin"]),
    /** The selected item (selection flow; 0 for a check-in session). */
    item: z.number().int().nonnegative().max(65535),
    /** The session's price or reserved amount. */
    price: amount,
    result: z.enum(["captured", "cancelled", "denied", "unsettled"]),
    reason: text(500),
    approved: amount,
    captured: amount,
    refunded: amount,
    /** ISO 4217 code of every amount here. */
    currency: z.string().regex(/^[A-Z]{3}$/),
    openedAt: epochMs,
    closedAt: epochMs,
    vends: z.array(WireVend).max(100),
    /** Flagged for review by the unit. */
    review: z.boolean(),
    /** A plan vend (driver `plan`, issue 18): the member whose entitlement paid for it; absent otherwise. */
    member: z.strictObject({ memberId: id, planId: id }).nullable().optional(),
  })
  .superRefine((s, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (s.approved > s.price)
      issue("approved", `approved ${s.approved} exceeds the session's price ${s.price} (impossible session)`);
    if (s.captured > s.approved)
      issue("captured", `captured ${s.captured} exceeds approved ${s.approved} (impossible session)`);
    if (s.refunded > s.captured)
      issue("refunded", `refunded ${s.refunded} exceeds captured ${s.captured} (impossible session)`);
    if (s.closedAt < s.openedAt)
      issue("closedAt", `closed at ${s.closedAt}, before it opened at ${s.openedAt} (impossible session)`);
  });
export type SessionData = z.infer<typeof SessionData>;

/** A fault the unit raised or cleared (VMC link lost, journal write failure, payment service down). */
export const FaultData = z.strictObject({
  code: id,
  state: z.enum(["raised", "cleared"]),
  message: text(500),
});
export type FaultData = z.infer<typeof FaultData>;

/** The unit went in or out of service, or into or out of a technician's service mode. */
export const ServiceData = z.strictObject({
  state: z.enum(["inService", "outOfService", "serviceMode"]),
  reason: text(500),
});
export type ServiceData = z.infer<typeof ServiceData>;

/** A config or release bundle was applied or rolled back (src/update), or the running version changed. */
export const VersionData = z.strictObject({
  kind: z.enum(["config", "release"]),
  /** The bundle's payload id (its signed trusted comment), when a bundle caused the change. */
  bundleId: text(128).nullable(),
  version: text(128),
  outcome: z.enum(["applied", "rolledBack", "started"]),
  reason: text(500),
});
export type VersionData = z.infer<typeof VersionData>;

/** The most of a DEX file an event carries (real files are 0.2-8 KB); a larger one goes without its text. */
export const DEX_WIRE_RAW_MAX = 16 * 1024;

/**
 * A read of the machine's DEX port (issue 36): the raw EVA-DTS text and the parsed since-init counters
 * (drivers/dex/counters.ts DexCounters, integers in minor units), or why the read failed.
 */
export const DexData = z.strictObject({
  readId: id,
  trigger: z.enum(["schedule", "console", "push"]),
  outcome: z.enum(["ok", "failed"]),
  role: z.enum(["master", "slave"]).nullable(),
  attempts: z.number().int().min(0).max(100),
  raw: z.string().max(DEX_WIRE_RAW_MAX).nullable(),
  rawBytes: z
    .number()
    .int()
    .min(0)
    .max(16 * 1024 * 1024),
  counters: z.record(z.string(), z.unknown()).nullable(),
  g85: text(16).nullable(),
  warnings: z.number().int().min(0).max(100_000),
  error: text(500).nullable(),
});
export type DexData = z.infer<typeof DexData>;

const base = { seq: z.number().int().positive().max(Number.MAX_SAFE_INTEGER), at: epochMs };
/** One outbox event: `seq` is per unit, 1, 2, 3, … with no gaps, assigned by the unit's journal. */
export const UnitEvent = z.discriminatedUnion("kind", [
  z.strictObject({ ...base, kind: z.literal("session"), data: SessionData }),
  z.strictObject({ ...base, kind: z.literal("fault"), data: FaultData }),
  z.strictObject({ ...base, kind: z.literal("service"), data: ServiceData }),
  z.strictObject({ ...base, kind: z.literal("version"), data: VersionData }),
  z.strictObject({ ...base, kind: z.literal("dex"), data: DexData }),
]);
export type UnitEvent = z.infer<typeof UnitEvent>;
export type UnitEventKind = UnitEvent["kind"];

/** A batch of events in increasing `seq` order (not necessarily starting at the fleet's next one). */
export const EventBatch = z.strictObject({
  unitId: id,
  events: z.array(UnitEvent).min(1).max(MAX_BATCH_EVENTS),
});
export type EventBatch = z.infer<typeof EventBatch>;

/**
 * The fleet's answer to a batch: the highest `seq` such that every event 1..committed of this unit is
 * committed in the fleet's database. The unit marks events up to it delivered; events past a gap are kept
 * by the fleet only once the gap is filled (the unit re-sends from committed + 1).
 */
export const EventAck = z.strictObject({ committed: z.number().int().nonnegative() });
export type EventAck = z.infer<typeof EventAck>;

/** Every minute: what the unit is doing, so the fleet can show it (and notice when it stops). */
export const Heartbeat = z.strictObject({
  unitId: id,
  at: epochMs,
  /** ServiceState's state: starting, inService, degraded, outOfService, serviceMode, stopping. */
  state: text(32),
  reason: text(500),
  versions: z.strictObject({
    vendd: text(64),
    config: text(128).nullable(),
    release: text(128).nullable(),
  }),
  backlog: z.strictObject({
    events: z.number().int().nonnegative(),
    oldestAt: epochMs.nullable(),
    /** Highest seq the journal has assigned. */
    lastSeq: z.number().int().nonnegative(),
  }),
  journal: z.strictObject({ ok: z.boolean(), detail: text(500) }),
  vmc: z.enum(["up", "down", "unknown"]),
  payment: z.enum(["up", "down", "unknown"]),
  unresolved: z.number().int().nonnegative(),
  /**
   * The unit's fleet name (`updates.fleet`), if any: a bundle whose targets name it is for this unit too,
   * as the unit's own applier accepts it. Absent from units before this field.
   */
  fleet: text(64).nullable().optional(),
});
export type Heartbeat = z.infer<typeof Heartbeat>;

export const HeartbeatResponse = z.strictObject({
  /** The fleet's clock, so the unit can warn about skew before its signatures are refused. */
  now: epochMs,
  /** The fleet's committed seq for this unit (as in {@link EventAck}). */
  committed: z.number().int().nonnegative(),
  /** ETag of the newest bundle for this unit, if any: the unit pulls when it differs from its own. */
  bundleEtag: z.string().max(128).nullable(),
  /**
   * ETag of the newest signed entitlement list for this unit (issue 18), if any: the unit fetches
   * `GET /entitlements` when it differs from the list it holds. Absent from fleets without plans.
   */
  entitlementsEtag: z.string().max(128).nullable().optional(),
  /**
   * ETag of the values the fleet holds for this unit (issue 41): the unit fetches `GET /values` when it
   * differs from the one it holds. Absent from fleets without a values key.
   */
  valuesEtag: z.string().max(128).optional(),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponse>;

/**
 * Issue 41: the steps of a bundle on a unit, in order; `refused` and `rolledBack` end it with a reason.
 * `fetched` is the daemon's (bundleFetch.ts), the others the applier's (src/update), sent by the daemon.
 */
export const BUNDLE_STEPS = [
  "fetched",
  "verified",
  "applied",
  "healthy",
  "committed",
  "refused",
  "rolledBack",
] as const;
export const BundleStep = z.enum(BUNDLE_STEPS);
export type BundleStep = z.infer<typeof BundleStep>;

/**
 * One step of a bundle on the unit, sent as soon as it happens and again until acknowledged. The bundle is
 * named by the SHA-256 of its bytes (the fleet's ETag without quotes), which both the daemon and the
 * applier know. The fleet stores each (bundle, unit, step) once.
 */
export const StepReport = z.strictObject({
  unitId: id,
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "a lower-case hex SHA-256"),
  step: BundleStep,
  reason: text(500),
  at: epochMs,
});
export type StepReport = z.infer<typeof StepReport>;

/** The fleet's answer: `stored` false when it holds no such bundle (one from a USB stick) or had the step. */
export const StepAck = z.strictObject({ stored: z.boolean() });
export type StepAck = z.infer<typeof StepAck>;

export const EnrollRequest = z.strictObject({
  unitId: id,
  /** Free text the manager sees beside the fingerprint (site, machine). */
  label: text(200),
});
export type EnrollRequest = z.infer<typeof EnrollRequest>;

export const EnrollResponse = z.strictObject({
  status: z.enum(["pending", "approved"]),
  fingerprint: z.string(),
});
export type EnrollResponse = z.infer<typeof EnrollResponse>;

export const WireError = z.strictObject({
  error: z.strictObject({ code: z.string(), message: z.string() }),
});
export type WireError = z.infer<typeof WireError>;

/** Parses `value` with `schema`; on failure, one line naming the first offending path. */
export function parseWire<T>(
  schema: z.ZodType<T>,
  value: unknown,
): { ok: true; value: T } | { ok: false; error: string } {
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, value: r.data };
  const first = r.error.issues[0];
  const path = first && first.path.length > 0 ? first.path.join(".") : "(body)";
  return { ok: false, error: `${path}: ${first?.message ?? "invalid"}` };
}
