import { randomUUID } from "node:crypto";
import type { EmuRequest, EmuResponse } from "../types.js";

/**
 * The error answers of the subscriptions interfaces. The deprecated interface's shapes are the seed's
 * (§Errors); the current interface's body structure is not shown, so the emulator uses the same shape there.
 */
export function correlation(req: EmuRequest): string {
  const given = req.headers.correlationid;
  return typeof given === "string" && given !== "" ? given : randomUUID();
}

export function badRequest(req: EmuRequest, message: string): EmuResponse {
  return {
    status: 400,
    body: {
      error: "BadRequest",
      error_description: { message, error_type: "InputError", correlation_id: correlation(req) },
    },
  };
}

export function precondition(req: EmuRequest, message: string): EmuResponse {
  return {
    status: 412,
    body: {
      error: "PreconditionFailed",
      error_description: { message, error_type: "PreconditionError", correlation_id: correlation(req) },
    },
  };
}

export function serverError(req: EmuRequest, message: string): EmuResponse {
  return {
    status: 500,
    body: {
      error: "InternalServerError",
      error_description: { message, error_type: "ServerError", correlation_id: correlation(req) },
    },
  };
}

/** A state conflict of the current interface (status not shown in the seed: the emulator answers 409). */
export function conflict(req: EmuRequest, message: string): EmuResponse {
  return {
    status: 409,
    body: {
      error: "Conflict",
      error_description: { message, error_type: "ConflictError", correlation_id: correlation(req) },
    },
  };
}

export const NOT_FOUND: EmuResponse = { status: 404 };
export const UNAUTHORIZED: EmuResponse = { status: 401, headers: { "www-authenticate": "Bearer" } };
