/**
 * Issue 41: the values the fleet holds for this unit (its groups' and its own: the `group:<name>` and `unit`
 * layers of its config, src/config/fleetValues.ts), fetched when a heartbeat answer's `valuesEtag` differs
 * from the one held (so also at start: the first heartbeat). The document is verified before anything is
 * written: signed by `fleet.valuesKey`, with the values purpose, made for this unit (a document for another
 * unit is refused), setting no identity key, and not older than the one held. It is then written beside the
 * unit key (`fleet-values.json`, 0600, atomically), where loading the config reads it. Values already held
 * keep working when the fleet is away: nothing here is in the path of a vend.
 *
 * A new document takes effect when the daemon next starts (as a console `config apply` does, through a
 * restart): the daemon logs that a restart is needed, and `vendd config print --origin` shows the values
 * at once.
 */

import { readFileSync } from "node:fs";
import type { Dispatcher } from "undici";
import {
  heldValuesFile,
  NO_VALUES_ETAG,
  parseValuesDocument,
  SignedValues,
  type UnitValuesDocument,
} from "../config/fleetValues.js";
import { writeFileAtomic } from "../core/atomicFile.js";
import { UNIT_API } from "../core/fleetWire.js";
import type { PublicKey } from "../update/minisign.js";
import { ValuesError, verifyUnitValues } from "../update/unitValues.js";
import { signedGet, type UnitSigner } from "./signedGet.js";

export { heldValuesFile } from "../config/fleetValues.js";

/** What the unit holds: the ETag and the document's issue time (null: no document held). */
export function readHeldValues(file: string, unitId: string): { etag: string; issuedAt: number | null } {
  try {
    const held = SignedValues.parse(JSON.parse(readFileSync(file, "utf8")));
    const doc = parseValuesDocument(held.document, unitId);
    return { etag: held.etag ?? NO_VALUES_ETAG, issuedAt: doc.issuedAt };
  } catch {
    // Missing or unusable: none held (the worst case is one more fetch).
    return { etag: NO_VALUES_ETAG, issuedAt: null };
  }
}

export type ValuesFetchResult =
  | { status: "stored"; etag: string | null; document: UnitValuesDocument }
  | { status: "unchanged" }
  | { status: "none" };

/**
 * `GET /api/unit/v1/values` (conditional on `etag`), verified for `unitId` with `publicKey`, stored in
 * `file`. Throws {@link ValuesError} for a refused document (nothing written), or an Error for a network or
 * HTTP failure.
 */
export async function fetchValues(
  baseUrl: string,
  signer: UnitSigner,
  o: { unitId: string; publicKey: PublicKey; file: string; etag: string | null },
  opts: { timeoutMs?: number; signal?: AbortSignal; dispatcher?: Dispatcher | undefined } = {},
): Promise<ValuesFetchResult> {
  const res = await signedGet(baseUrl, signer, "values", o.etag, {
    timeoutMs: opts.timeoutMs ?? 30_000,
    ...(opts.dispatcher === undefined ? {} : { dispatcher: opts.dispatcher }),
    ...(opts.signal === undefined ? {} : { signal: opts.signal }),
  });
  if (res.status !== "ok") return res;
  const body = SignedValues.safeParse(await res.body.json());
  if (!body.success)
    throw new ValuesError("malformed", `GET ${UNIT_API}/values: the body is not signed values`);
  const document = verifyUnitValues(body.data.document, body.data.signature, o.publicKey, o.unitId);
  const held = readHeldValues(o.file, o.unitId);
  if (held.issuedAt !== null && document.issuedAt < held.issuedAt)
    throw new ValuesError("stale", "the values are older than the ones held");
  const stored: SignedValues = {
    document: body.data.document,
    signature: body.data.signature,
    ...(res.etag === null ? {} : { etag: res.etag }),
  };
  writeFileAtomic(o.file, `${JSON.stringify(stored)}\n`, { mode: 0o600 });
  return { status: "stored", etag: res.etag, document };
}
