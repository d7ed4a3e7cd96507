import type { EmuRequest, EmuResponse, InterfaceHandler } from "../types.js";
import { correlationOf, errorResponse, fail, V10Error } from "./errors.js";
import type { Caller } from "./headers.js";
import { checkCall } from "./headers.js";
import type { V10Deps } from "./machine.js";
import { refreshPayment } from "./machine.js";
import type { Payment, Pos } from "./model.js";
import { createPayment, readyPayment } from "./payments-create.js";
import { cancelPayment, capturePayment, getPayment, listPayments } from "./payments-ops.js";
import { createPos, deletePos, getCheckin, getPos, listPos } from "./pos.js";
import { cancelRefund, captureRefund, createRefund, findRefund, getRefund, listRefunds } from "./refunds.js";
import { getStore, listStores, VAT_LOOKUP_PATH, vatLookup } from "./stores.js";

type Route = (d: V10Deps, req: EmuRequest, caller: Caller, id: string) => EmuResponse | Promise<EmuResponse>;

function payment(d: V10Deps, id: string): Payment {
  const p = d.world.payments.get(id);
  if (p === undefined) fail(404, null, "payment not found");
  refreshPayment(d, p, d.clock.now());
  return p;
}

function pos(d: V10Deps, id: string): Pos {
  const found = d.world.poses.get(id);
  if (found === undefined || found.deleted) fail(404, null, "point of sale not found");
  return found;
}

/** Routes by resource, sub-resource ("" for none) and method (pos-v10 §4). */
const ROUTES: Record<string, Record<string, Record<string, Route>>> = {
  payments: {
    "": {
      GET: (d, req, c) => listPayments(d, req, c),
      POST: (d, req, c) => createPayment(d, req, c, false),
    },
    prepare: { POST: (d, req, c) => createPayment(d, req, c, true) },
    "{id}": { GET: (d, _req, c, id) => getPayment(d, c, payment(d, id)) },
    ready: { POST: (d, req, c, id) => readyPayment(d, req, c, payment(d, id)) },
    capture: { POST: (d, req, c, id) => capturePayment(d, req, c, payment(d, id)) },
    cancel: { POST: (d, req, c, id) => cancelPayment(d, req, c, payment(d, id)) },
  },
  pointofsales: {
    "": { GET: (d, req, c) => listPos(d, req, c), POST: (d, req, c) => createPos(d, req, c) },
    "{id}": {
      GET: (d, _req, c, id) => getPos(c, pos(d, id)),
      DELETE: (d, _req, c, id) => deletePos(d, c, pos(d, id)),
    },
    checkin: { GET: (d, _req, c, id) => getCheckin(d, c, pos(d, id)) },
  },
  refunds: {
    "": { GET: (d, req, c) => listRefunds(d, req, c), POST: (d, req, c) => createRefund(d, req, c) },
    "{id}": { GET: (d, _req, c, id) => getRefund(d, c, findRefund(d, id, null)) },
    capture: { POST: (d, req, c, id) => captureRefund(d, req, c, findRefund(d, id, "1004")) },
    cancel: { POST: (d, req, c, id) => cancelRefund(d, req, c, findRefund(d, id, null)) },
  },
  stores: {
    "": { GET: (d, req, c) => listStores(d, req, c) },
    "{id}": { GET: (d, _req, c, id) => getStore(d, c, id) },
  },
};

/** Splits `/v10/{resource}[/{id}[/{action}]]`; `prepare` is a fixed segment, not an id. */
function match(path: string): { methods: Record<string, Route>; id: string } | null {
  const parts = path.split("/");
  if (parts[1] !== "v10" || parts.length < 3 || parts.length > 5) return null;
  const table = ROUTES[parts[2] ?? ""];
  if (table === undefined) return null;
  const seg = parts[3];
  if (seg === undefined || seg === "")
    return parts.length === 3 && table[""] ? { methods: table[""], id: "" } : null;
  if (parts.length === 4) {
    const fixed = seg === "prepare" ? table.prepare : undefined;
    if (fixed) return { methods: fixed, id: "" };
    const byId = table["{id}"];
    return byId ? { methods: byId, id: decodeSafe(seg) } : null;
  }
  const action = parts[4] ?? "";
  const methods = action === "prepare" || action === "{id}" || action === "" ? undefined : table[action];
  return methods ? { methods, id: decodeSafe(seg) } : null;
}

function decodeSafe(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}

/**
 * The V10 interface (`/v10/…` and the temporary VAT lookup): authentication and headers first (pos-v10
 * §11 order), then the route. Thrown V10Errors become `{code, message, correlationId}` answers.
 */
export function createV10Handler(d: V10Deps): InterfaceHandler {
  return {
    async handle(req: EmuRequest): Promise<EmuResponse | null> {
      const isVat = req.path === VAT_LOOKUP_PATH;
      const route = isVat ? null : match(req.path);
      if (!isVat && route === null)
        return req.path.startsWith("/v10/") || req.path === "/v10" ? { status: 404 } : null;
      try {
        if (isVat) {
          if (req.method !== "GET") return { status: 405, headers: { allow: "GET" } };
          if (d.tokens.verifyRequest(req) === null) return { status: 401 };
          return vatLookup(d, req);
        }
        if (route === null) return { status: 404 };
        const fn = route.methods[req.method];
        if (fn === undefined)
          return { status: 405, headers: { allow: Object.keys(route.methods).join(", ") } };
        const caller = checkCall(req, d.tokens);
        return await fn(d, req, caller, route.id);
      } catch (e: unknown) {
        if (e instanceof V10Error) return errorResponse(e, correlationOf(req.headers));
        throw e;
      }
    },
  };
}
