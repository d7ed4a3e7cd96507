/**
 * Request body limits per route. The default (`bodyLimitBytes`, 64 KiB) fits every single request of the
 * point-of-sale interfaces; the batch routes take arrays the seeds allow up to 2000 elements long, so their
 * limit is sized for 2000 elements with room for large ones: above the seed's count a batch gets the seed's
 * own refusal (an array within the limit), and only an absurd body still gets 413.
 */
export interface RouteLimit {
  method: string;
  path: RegExp;
  /** Largest accepted body, bytes. */
  bytes: number;
}

const MIB = 1024 * 1024;

/**
 * Subscription payment requests (seed 000: at most 2000; an element with every field at its maximum and an
 * `invoice` attachment of a few dozen articles stays under 8 KiB): 16 MiB. Invoice batches (seed 002: up to
 * 2000 invoices; 16 KiB each, some 50 articles): 32 MiB. A single invoice (up to 1000 articles): 1 MiB.
 */
export const ROUTE_LIMITS: readonly RouteLimit[] = [
  { method: "POST", path: /^\/api\/providers\/[^/]+\/paymentrequests$/, bytes: 16 * MIB },
  { method: "POST", path: /^\/api\/merchants\/me\/paymentrequests$/, bytes: 16 * MIB },
  { method: "POST", path: /^\/api\/v1\/merchants\/[^/]+\/invoices(?:\/link)?\/batch$/, bytes: 32 * MIB },
  { method: "POST", path: /^\/api\/v1\/merchants\/[^/]+\/invoices(?:\/link)?$/, bytes: MIB },
];

/** The body limit of a request: its route's, or `fallback` when larger or when the route has none. */
export function bodyLimitFor(method: string, path: string, fallback: number): number {
  for (const r of ROUTE_LIMITS)
    if (r.method === method && r.path.test(path)) return Math.max(r.bytes, fallback);
  return fallback;
}
