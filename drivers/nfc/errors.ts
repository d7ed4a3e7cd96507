export type NfcErrorCode =
  /** The check-in URI does not fit a short NDEF record, or the tag's data area. */
  | "tooLong"
  /** The tag has no NDEF capability container (not an NFC Forum Type 2 tag such as NTAG21x). */
  | "notNdef"
  /** The capability container denies writing (a locked tag). */
  | "readOnly"
  /** Reading back after the write did not give the URI that was written. */
  | "verifyFailed"
  /** The reader or the tag failed (tag removed mid-write, transmit error). */
  | "io"
  /** No tag was presented before the timeout. */
  | "timeout"
  /** A write is already armed, or the station is closed. */
  | "state"
  /** A badge hash in configuration is malformed. */
  | "config";

export class NfcError extends Error {
  override readonly name = "NfcError";
  constructor(
    readonly code: NfcErrorCode,
    message: string,
  ) {
    super(message);
  }
}
