/** Codes of the emulator's own (non-protocol) errors. */
export type EmulatorErrorCode = "invalidInput" | "notFound" | "conflict";

/** An error of the emulator's admin API, seed file or in-process API (not a service protocol answer). */
export class EmulatorInputError extends Error {
  override readonly name = "EmulatorInputError";
  constructor(
    message: string,
    readonly code: EmulatorErrorCode = "invalidInput",
  ) {
    super(message);
  }
}
