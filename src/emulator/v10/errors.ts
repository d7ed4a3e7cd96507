import { randomUUID } from "node:crypto";
import type { EmuResponse } from "../types.js";

/**
 * A V10 error answer, thrown inside a route and turned into a response by the handler: `{code, message,
 * correlationId}` with `code` a string (pos-v10 §5 ErrorResponse). `code: null` means an answer without a
 * body (`401`, and `404` where the seed shows no code, pos-v10 §4).
 */
export class V10Error extends Error {
  override readonly name = "V10Error";
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message);
  }
}

/** Throws a V10 error answer. */
export function fail(status: number, code: string | null, message: string): never {
  throw new V10Error(status, code, message);
}

/** The correlation id to echo (pos-v10 §3 `CorrelationId` header), else a fresh one. */
export function correlationOf(headers: Record<string, string | string[] | undefined>): string {
  const given = headers.correlationid;
  return typeof given === "string" && given !== "" && given.length <= 64 ? given : randomUUID();
}

/** The response for a thrown V10Error. */
export function errorResponse(e: V10Error, correlationId: string): EmuResponse {
  if (e.code === null) return { status: e.status };
  return { status: e.status, body: { code: e.code, message: e.message, correlationId } };
}
