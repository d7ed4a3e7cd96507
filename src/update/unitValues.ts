/**
 * The signed values document of one unit (issue 41; the document is src/config/fleetValues.ts). The fleet
 * signs it with its **values key**, a minisign key that can set fleet-held config values and nothing else;
 * the unit's `fleet.valuesKey` names the public key, so a bundle's or an entitlement list's signature is
 * refused (another key id, or the trusted comment lacks the values purpose). The trusted comment is
 * `vendd-unit-values v1 unit:<id> issued:<ms> sha256:<hex of document>`: the unit id is signed twice (in
 * the document and in the comment), and a unit refuses a document made for another.
 */
import { createHash } from "node:crypto";
import { parseValuesDocument, type UnitValuesDocument } from "../config/fleetValues.js";
import {
  formatSignature,
  MinisignError,
  type PublicKey,
  parseSignature,
  type SecretKey,
  signData,
  verifySignature,
} from "./minisign.js";

export const VALUES_PURPOSE = "vendd-unit-values v1";

/** Why a values document was refused. */
export class ValuesError extends Error {
  constructor(
    readonly code: "malformed" | "signature" | "wrongKey" | "purpose" | "otherUnit" | "stale",
    message: string,
  ) {
    super(message);
  }
}

function comment(doc: UnitValuesDocument, document: string): string {
  const sha = createHash("sha256").update(document).digest("hex");
  return `${VALUES_PURPOSE} unit:${doc.unitId} issued:${doc.issuedAt} sha256:${sha}`;
}

/** Signs `doc` for its unit: the document text (exactly the bytes signed) and the minisign signature. */
export function signUnitValues(
  doc: UnitValuesDocument,
  key: SecretKey,
): { document: string; signature: string } {
  const document = JSON.stringify(doc);
  const sig = signData(Buffer.from(document), key, comment(doc, document), "vendd unit values");
  return { document, signature: formatSignature(sig) };
}

/**
 * Verifies a values document for the unit `unitId`: signed by `pk` (the config's `fleet.valuesKey`) with
 * the values purpose, made for this unit (document and trusted comment), and setting no identity key.
 * Throws {@link ValuesError} with a specific code.
 */
export function verifyUnitValues(
  document: string,
  signature: string,
  pk: PublicKey,
  unitId: string,
): UnitValuesDocument {
  let sig: ReturnType<typeof parseSignature>;
  try {
    sig = parseSignature(signature);
  } catch (err) {
    throw new ValuesError("malformed", `the signature is unreadable: ${(err as Error).message}`);
  }
  try {
    verifySignature(Buffer.from(document), sig, pk);
  } catch (err) {
    if (err instanceof MinisignError && err.code === "unknown_key")
      throw new ValuesError(
        "wrongKey",
        `the values are not signed by the fleet's values key (${err.message})`,
      );
    throw new ValuesError("signature", "the values do not match their signature");
  }
  if (!sig.trustedComment.startsWith(`${VALUES_PURPOSE} `))
    throw new ValuesError("purpose", "the signature is not a values document's");
  let doc: UnitValuesDocument;
  try {
    doc = parseValuesDocument(document, unitId);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new ValuesError(message.includes("not this unit") ? "otherUnit" : "malformed", message);
  }
  if (sig.trustedComment !== comment(doc, document))
    throw new ValuesError("otherUnit", "the signature's trusted comment names another unit or document");
  return doc;
}
