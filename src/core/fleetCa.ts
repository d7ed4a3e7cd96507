/**
 * A fleet behind a private certificate authority (issue 43; config `fleet.caFile`, docs/operators.md): every
 * HTTPS request the unit makes to its fleet (the link's batches and heartbeats, the bundle and entitlement
 * fetches, `vendd fleet enroll`, `vendd bundle pull` from the fleet) goes through one undici Agent that
 * trusts the certificates in that PEM file, and only those. Without `caFile` the system's public
 * authorities are used, as before.
 */
import { readFileSync } from "node:fs";
import { Agent, type Dispatcher } from "undici";
import { printable } from "./printable.js";

export class FleetCaError extends Error {}

/** The PEM text of `file`; FleetCaError naming the file, the reason and the next step otherwise. */
export function readFleetCa(file: string): string {
  let pem: string;
  try {
    pem = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new FleetCaError(
      `fleet.caFile ${printable(file)} cannot be read (${code}): copy the fleet's CA certificate (PEM) there, or remove fleet.caFile to use the system's authorities`,
    );
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----"))
    throw new FleetCaError(
      `fleet.caFile ${printable(file)} holds no PEM certificate (no "-----BEGIN CERTIFICATE-----" line): it must be the fleet's CA certificate, not a key or a DER file`,
    );
  return pem;
}

/** The dispatcher for requests to the fleet: undefined (undici's default) without a CA file. */
export function fleetDispatcher(caFile: string | undefined): Dispatcher | undefined {
  if (caFile === undefined) return undefined;
  return new Agent({ connect: { ca: readFleetCa(caFile) } });
}

/**
 * A hint for a TLS verification failure talking to the fleet (appended to the error shown), or "" for any
 * other failure.
 */
export function fleetTlsHint(err: unknown, caFile: string | undefined): string {
  const text = `${(err as Error)?.message ?? ""} ${String((err as { cause?: unknown })?.cause ?? "")} ${String((err as { code?: unknown })?.code ?? "")}`;
  if (!/certificate|self[- ]signed|UNABLE_TO_VERIFY|CERT_|unable to get local issuer/i.test(text)) return "";
  return caFile === undefined
    ? "; a fleet with its own certificate authority: set fleet.caFile to that CA's certificate (PEM)"
    : `; the fleet's certificate does not chain to fleet.caFile ${printable(caFile)}`;
}
