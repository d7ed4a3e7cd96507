/**
 * The one error for "these seam options cannot give a device or driver": an unknown kind, or a kind whose
 * options lack what it needs. Every factory (`create<Seam>(options, deps)`) and the config mapping
 * (src/config/seams.ts) throw it, so a caller handles one type whatever the seam. Runtime failures of a
 * device (a port that does not open, a tag that does not verify) keep their drivers' own errors.
 *
 * Messages name the seam, the kind and the missing option, never an option's value: payment options carry
 * secrets.
 */

/** The seams the config maps options for (src/config/seams.ts). */
export const SEAMS = ["payment", "vmc", "display", "gpio", "ble", "nfc", "engine", "journal"] as const;
export type SeamName = (typeof SEAMS)[number];

export class SeamConfigError extends Error {
  override readonly name = "SeamConfigError";
  readonly code = "seamConfig";
  constructor(
    /** Which seam's options are wrong. */
    readonly seam: SeamName,
    /** The kinds that seam's factory has. */
    readonly validKinds: readonly string[],
    message: string,
  ) {
    super(message);
  }
}

/** The error for options whose `kind` the seam's factory does not have (unchecked input). */
export function unknownKind(
  seam: SeamName,
  options: unknown,
  validKinds: readonly string[],
): SeamConfigError {
  const kind = typeof options === "object" && options !== null ? Reflect.get(options, "kind") : undefined;
  return new SeamConfigError(
    seam,
    validKinds,
    `unknown ${seam} kind ${JSON.stringify(String(kind))}; valid: ${validKinds.join(", ")}`,
  );
}

/** The error for a known kind whose options lack `what` (named by its config path, never its value). */
export function incompleteOptions(
  seam: SeamName,
  kind: string,
  validKinds: readonly string[],
  what: string,
): SeamConfigError {
  return new SeamConfigError(seam, validKinds, `${seam} kind ${kind} needs ${what}`);
}
