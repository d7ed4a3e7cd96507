/**
 * A small in-test fleet double for the unit side (issue 16): node:http on 127.0.0.1:0, every request's
 * signature checked with fleetAuth.verifyRequest (and nonces refused when seen again), bodies checked with
 * the wire schemas, events stored idempotently by (unit, seq), `committed` = the highest contiguous seq.
 * It can be told to fail: answer 5xx, commit and then drop the answer (a lost ack), hang (a timeout), or
 * refuse the unit (403). The real server (src/fleet) is tested against the unit end to end by the lead.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { fingerprint, verifyRequest } from "../../src/core/fleetAuth.js";
import {
  EnrollRequest,
  EventBatch,
  Heartbeat,
  parseWire,
  UNIT_API,
  type UnitEvent,
} from "../../src/core/fleetWire.js";

export interface FakeFleetOptions {
  /** The fleet's clock for the signature's skew check (default Date.now). */
  now?: () => number;
  /** Units must be approved (by `approve`) before events and heartbeats are taken (default false). */
  requireApproval?: boolean;
}

type Mode = { kind: "fail"; status: number } | { kind: "drop" } | { kind: "hang" } | { kind: "refuse" };

export class FakeFleet {
  /** Stored events per unit id, by seq (each stored once). */
  readonly events = new Map<string, Map<number, UnitEvent>>();
  /** Every event received, duplicates included. */
  received = 0;
  heartbeats: Heartbeat[] = [];
  /** What heartbeat answers advertise as the entitlement list's ETag (issue 18); absent when null. */
  entitlementsEtag: string | null = null;
  /** What heartbeat answers advertise as the unit's bundle's ETag (issue 41). */
  bundleEtag: string | null = null;
  requests = 0;
  /** Refused requests by code (signature, replay, ...). */
  readonly refusals: string[] = [];
  readonly units = new Map<string, { key: string; label: string; approved: boolean }>();
  private readonly nonces = new Set<string>();
  private readonly modes: Mode[] = [];
  private always: Mode | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly hung: ServerResponse[] = [];

  private constructor(
    private readonly server: Server,
    private readonly opts: FakeFleetOptions,
  ) {}

  static async start(opts: FakeFleetOptions = {}): Promise<FakeFleet> {
    let fleet: FakeFleet | null = null;
    const server = createServer((req, res) => {
      void fleet?.handle(req, res);
    });
    fleet = new FakeFleet(server, opts);
    const f = fleet;
    server.on("connection", (s) => {
      f.sockets.add(s);
      s.on("close", () => f.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return fleet;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next `n` requests answer `status` (e.g. 503) without storing anything. */
  failNext(n: number, status = 503): void {
    for (let i = 0; i < n; i++) this.modes.push({ kind: "fail", status });
  }
  /** The next `n` requests are processed (events committed) but the connection is cut before the answer. */
  dropNext(n: number): void {
    for (let i = 0; i < n; i++) this.modes.push({ kind: "drop" });
  }
  /** The next `n` requests get no answer at all (the unit's timeout). */
  hangNext(n: number): void {
    for (let i = 0; i < n; i++) this.modes.push({ kind: "hang" });
  }
  /** Every request from now on fails this way (null: back to normal). */
  setAlways(mode: "down" | "refuse" | null): void {
    this.always = mode === null ? null : mode === "down" ? { kind: "fail", status: 503 } : { kind: "refuse" };
  }

  approve(unitId: string): void {
    const u = this.units.get(unitId);
    if (u) u.approved = true;
  }

  /** The fleet is restored from a backup taken when it had the unit's events up to `upTo` only. */
  restore(unitId: string, upTo: number): void {
    const m = this.events.get(unitId);
    for (const seq of [...(m?.keys() ?? [])]) if (seq > upTo) m?.delete(seq);
  }

  committed(unitId: string): number {
    const m = this.events.get(unitId);
    let c = 0;
    while (m?.has(c + 1)) c++;
    return c;
  }

  /** The unit's stored events in seq order. */
  stored(unitId: string): UnitEvent[] {
    return [...(this.events.get(unitId)?.values() ?? [])].sort((a, b) => a.seq - b.seq);
  }

  async close(): Promise<void> {
    for (const r of this.hung) r.destroy();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  }

  private refuse(res: ServerResponse, status: number, code: string, message: string): void {
    this.refusals.push(code);
    this.send(res, status, { error: { code, message } });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requests++;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const mode = this.modes.shift() ?? this.always;
    if (mode?.kind === "fail") return this.refuse(res, mode.status, "unavailable", "told to fail");
    if (mode?.kind === "hang") {
      this.hung.push(res);
      return;
    }
    const path = req.url ?? "";
    const now = (this.opts.now ?? Date.now)();
    const v = verifyRequest(req.method ?? "", path, req.headers, raw, now);
    if (!v.ok) return this.refuse(res, 401, v.code, v.message);
    if (this.nonces.has(`${v.publicKey} ${v.nonce}`)) return this.refuse(res, 401, "replay", "nonce seen");
    this.nonces.add(`${v.publicKey} ${v.nonce}`);
    if (mode?.kind === "refuse") return this.refuse(res, 403, "notApproved", "this unit is not approved");
    let body: unknown;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch {
      return this.refuse(res, 400, "malformed", "not JSON");
    }
    const answer = this.route(path, v.publicKey, body);
    if (answer.status >= 400)
      return this.refuse(res, answer.status, answer.code ?? "error", answer.message ?? "");
    if (mode?.kind === "drop") {
      res.socket?.destroy();
      return;
    }
    this.send(res, answer.status, answer.body);
  }

  private route(
    path: string,
    publicKey: string,
    body: unknown,
  ):
    | { status: number; body: unknown; code?: never; message?: never }
    | { status: number; code: string; message: string; body?: never } {
    const owner = (unitId: string) => {
      const u = this.units.get(unitId);
      if (u === undefined && !this.opts.requireApproval) {
        this.units.set(unitId, { key: publicKey, label: "", approved: true });
        return null;
      }
      if (u === undefined || u.key !== publicKey)
        return { status: 403, code: "unknown", message: "not enrolled" };
      if (!u.approved) return { status: 403, code: "notApproved", message: "not approved" };
      return null;
    };
    switch (path) {
      case `${UNIT_API}/enroll`: {
        const r = parseWire(EnrollRequest, body);
        if (!r.ok) return { status: 400, code: "malformed", message: r.error };
        const u = this.units.get(r.value.unitId);
        if (u !== undefined && u.key !== publicKey)
          return { status: 409, code: "idTaken", message: "unit id claimed by another key" };
        if (u === undefined)
          this.units.set(r.value.unitId, {
            key: publicKey,
            label: r.value.label,
            approved: !this.opts.requireApproval,
          });
        const approved = this.units.get(r.value.unitId)?.approved === true;
        return {
          status: approved ? 200 : 202,
          body: { status: approved ? "approved" : "pending", fingerprint: fingerprint(publicKey) },
        };
      }
      case `${UNIT_API}/events`: {
        const r = parseWire(EventBatch, body);
        if (!r.ok) return { status: 400, code: "malformed", message: r.error };
        const refused = owner(r.value.unitId);
        if (refused) return refused;
        let m = this.events.get(r.value.unitId);
        if (m === undefined) {
          m = new Map();
          this.events.set(r.value.unitId, m);
        }
        // Kept only when contiguous with what is committed (the wire contract).
        for (const e of r.value.events) {
          this.received++;
          if (!m.has(e.seq) && e.seq === this.committed(r.value.unitId) + 1) m.set(e.seq, e);
        }
        return { status: 200, body: { committed: this.committed(r.value.unitId) } };
      }
      case `${UNIT_API}/heartbeat`: {
        const r = parseWire(Heartbeat, body);
        if (!r.ok) return { status: 400, code: "malformed", message: r.error };
        const refused = owner(r.value.unitId);
        if (refused) return refused;
        this.heartbeats.push(r.value);
        return {
          status: 200,
          body: {
            now: (this.opts.now ?? Date.now)(),
            committed: this.committed(r.value.unitId),
            bundleEtag: this.bundleEtag,
            ...(this.entitlementsEtag === null ? {} : { entitlementsEtag: this.entitlementsEtag }),
          },
        };
      }
      default:
        return { status: 404, code: "notFound", message: path };
    }
  }

  /** Pretends the fleet already holds `n` events of a unit (a journal replaced on the unit). */
  seed(unitId: string, key: string, n: number): void {
    this.units.set(unitId, { key, label: "", approved: true });
    const m = new Map<number, UnitEvent>();
    for (let seq = 1; seq <= n; seq++)
      m.set(seq, {
        seq,
        at: 0,
        kind: "service",
        data: { state: "inService", reason: "old journal" },
      });
    this.events.set(unitId, m);
  }
}
