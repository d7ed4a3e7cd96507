/** Field rules shared by the config sections, each citing where it comes from. */
import * as z from "zod";

/**
 * The service's "valid characters" for names and ids (pos-v10.md §14): printable ASCII plus a fixed set of
 * Latin-1 letters and signs. A PoS name outside this set is refused by the service (code 1112).
 */
export const SERVICE_TEXT =
  /^[\x20-\x7EæÆøØåÅäÄöÖšŠžŽâÂàÀáÁãÃéÉêÊëËèÈíÍîÎïÏìÌüÜûÛùÙúÚôÔòÒóÓõÕÿýÝñÑ¦¯¨´×«»ðþçß¤ÇµÐÞ±°ªº©§¶¼½¾¬®¢£¥¡¿¹²³]*$/;

/** A non-empty string of at most `max` service-valid characters (pos-v10.md §14). */
export function serviceText(max: number) {
  return z
    .string()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters long`)
    .regex(SERVICE_TEXT, "contains characters the payment service does not accept (pos-v10.md §14)");
}

/**
 * A non-empty string without control characters: these values (paths, ids) reappear in doctor rows, log
 * lines and errors, where a control character could rewrite the operator's terminal.
 */
export function nonEmpty(max = 1024) {
  return z
    .string()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters long`)
    .regex(/^\P{Cc}*$/u, "must not contain control characters");
}

/** An http or https URL (the emulator speaks plain HTTP on loopback, pos-v10.md §1). */
export function httpUrl() {
  return z.url({
    protocol: /^https?$/,
    error: (iss) => (iss.input === undefined ? "required" : "must be an http(s) URL"),
  });
}

/** An integer in `[min, max]`. */
export function intIn(min: number, max: number) {
  return z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Options for a cross-field refinement that runs even when sibling fields failed, so that one run reports
 * every problem. Its callback therefore receives a possibly half-parsed value and must guard it as `unknown`.
 */
export const ALWAYS = { when: () => true } as const;

/** A dotted-path issue added by a cross-field rule. */
export interface CrossIssue {
  path: string[];
  message: string;
}

/**
 * A cross-field check for `.superRefine(crossCheck(fn), ALWAYS)`: `fn` sees the value as a guarded record
 * (or nothing when the value is not a mapping) and returns issues relative to it.
 */
export function crossCheck(fn: (value: Record<string, unknown>) => CrossIssue[]) {
  return (value: unknown, ctx: z.core.$RefinementCtx<unknown>): void => {
    if (!isRecord(value)) return;
    for (const issue of fn(value)) {
      ctx.addIssue({ code: "custom", path: issue.path, message: issue.message, input: undefined });
    }
  };
}
