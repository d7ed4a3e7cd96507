/**
 * Secret values that must never leave the process in clear: the loaded secrets, and derived credentials
 * learned at run time (a bearer token, a Basic authorization value). Structured redaction in the logger
 * touches only known field names; this registry lets the logger scrub the VALUES from every serialized
 * line, wherever they appear (reliability.md §5).
 */

/** What replaces a secret value in output. */
export const REDACTED = "[redacted]";

export class SecretRegistry {
  private readonly forms = new Set<string>();
  private sorted: string[] = [];

  /** @param values initial secret values (empty strings are ignored). */
  constructor(values: Iterable<string> = []) {
    for (const v of values) this.addSecret(v);
  }

  /**
   * Registers a secret value, together with the forms it takes inside a JSON log line (escaped once and
   * twice) and inside a URL or form body (percent-encoded). Empty strings are ignored. Idempotent.
   */
  addSecret(value: string): void {
    if (value === "") return;
    const escaped = JSON.stringify(value).slice(1, -1);
    const forms = [value, escaped, JSON.stringify(escaped).slice(1, -1), encodeURIComponent(value)];
    let added = false;
    for (const form of forms) {
      if (!this.forms.has(form)) {
        this.forms.add(form);
        added = true;
      }
    }
    // Longest first, so that a secret containing another is replaced whole.
    if (added) this.sorted = [...this.forms].sort((a, b) => b.length - a.length);
  }

  /** Number of registered forms (each secret adds 1-4). */
  get size(): number {
    return this.forms.size;
  }

  /** Returns `text` with every registered secret form replaced by `[redacted]`. */
  scrub(text: string): string {
    let out = text;
    for (const form of this.sorted) {
      if (out.includes(form)) out = out.split(form).join(REDACTED);
    }
    return out;
  }
}
