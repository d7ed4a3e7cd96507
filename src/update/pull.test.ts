/**
 * `vendd bundle pull` against a loopback HTTP server: conditional GET with the ETag, 304 does nothing, a
 * failure backs off (doubling, with jitter, persisted), and a truncated or interrupted download is never
 * applied.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config/load.js";
import { generateUnitKey, verifyRequest } from "../core/fleetAuth.js";
import type { ApplyEnv } from "./applyRun.js";
import { backoffMs, type PullOptions, pullBundle } from "./pull.js";
import { readState } from "./state.js";
import {
  JumpClock,
  makeKey,
  signedBundle,
  type TestKey,
  type UnitTree,
  unitConfig,
  unitTree,
} from "./update.test-support.js";

let key: TestKey;
beforeAll(async () => {
  key = await makeKey("pull");
});

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/fleet-a/latest.vbundle`;
}

function env(tree: UnitTree, clock: JumpClock): ApplyEnv {
  return {
    configFile: tree.configFile,
    loadConfig: (f) => loadConfig(f, { requireSecrets: false }).config,
    restart: async () => {},
    probeFor: () => ({
      sample: async () => ({ ready: true, vmcLinkUp: true, serviceReachable: true, journalErrors: 0 }),
    }),
    clock,
    faults: { hit() {} },
    log: () => {},
  };
}

function options(tree: UnitTree, url: string, random = () => 0.5): PullOptions {
  return { url, stateDir: tree.stateDir, minBackoffMs: 1000, maxBackoffMs: 8000, timeoutMs: 5000, random };
}

describe("backoff", () => {
  it("doubles from the minimum up to the maximum, with equal jitter", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, 1000, 8000, () => 0.999999))).toEqual([
      1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    expect(backoffMs(3, 1000, 8000, () => 0)).toBe(2000);
  });
});

describe("vendd bundle pull", () => {
  it("downloads, verifies and applies; then asks with If-None-Match and gets 304", async () => {
    const tree = unitTree("vendd-pull-");
    writeFileSync(tree.configFile, unitConfig(tree, [key]));
    const body = signedBundle([key], { version: 2, configText: unitConfig(tree, [key], { name: "Pulled" }) });
    const seen: (string | undefined)[] = [];
    const url = await serve((req, res) => {
      seen.push(req.headers["if-none-match"]);
      if (req.headers["if-none-match"] === '"v2"') {
        res.writeHead(304).end();
        return;
      }
      res.writeHead(200, { etag: '"v2"', "content-length": body.length }).end(body);
    });
    const clock = new JumpClock();
    const first = await pullBundle(env(tree, clock), options(tree, url));
    expect(first).toMatchObject({
      result: "applied",
      report: { outcomes: [{ result: "committed", source: "pull" }] },
    });
    expect(readState(tree.stateDir).highWater).toBe(2);
    const second = await pullBundle(env(tree, clock), options(tree, url));
    expect(second).toEqual({ result: "not_modified" });
    expect(seen).toEqual([undefined, '"v2"']);
    expect(existsSync(join(tree.stateDir, ".download.vbundle"))).toBe(false);
  });

  it("a truncated download is never applied and backs off; an HTTP error too; the wait is honoured", async () => {
    const tree = unitTree("vendd-pull-");
    const before = unitConfig(tree, [key]);
    writeFileSync(tree.configFile, before);
    const body = signedBundle([key], { version: 2, configText: unitConfig(tree, [key], { name: "Pulled" }) });
    let mode: "cut" | "short" | "500" | "ok" = "cut";
    let requests = 0;
    const url = await serve((_req, res) => {
      requests++;
      if (mode === "500") {
        res.writeHead(500).end();
      } else if (mode === "cut") {
        // Announces the whole length, sends half, then drops the connection.
        res.writeHead(200, { "content-length": body.length });
        res.write(body.subarray(0, body.length >> 1), () => res.socket?.destroy());
      } else if (mode === "short") {
        // No length announced: a clean end after half the bundle (the bundle's own end marker is missing).
        res.writeHead(200);
        res.end(body.subarray(0, body.length >> 1));
      } else {
        res.writeHead(200, { etag: '"x"', "content-length": body.length }).end(body);
      }
    });
    const clock = new JumpClock();
    const e = env(tree, clock);
    const cut = await pullBundle(e, options(tree, url));
    expect(cut).toMatchObject({ result: "failed", failures: 1 });
    expect(readFileSync(tree.configFile, "utf8")).toBe(before);

    // Within the backoff window nothing is requested.
    const waiting = await pullBundle(e, options(tree, url));
    expect(waiting).toMatchObject({ result: "backing_off", failures: 1 });
    expect(requests).toBe(1);

    clock.t += 60_000;
    mode = "short";
    const short = await pullBundle(e, options(tree, url));
    expect(short).toMatchObject({ result: "failed", failures: 2 });
    expect(readState(tree.stateDir).outcome).toMatchObject({ result: "refused", code: "truncated" });
    expect(readFileSync(tree.configFile, "utf8")).toBe(before);

    clock.t += 60_000;
    mode = "500";
    const err = await pullBundle(
      e,
      options(tree, url, () => 0),
    );
    expect(err).toMatchObject({ result: "failed", failures: 3, reason: "HTTP 500" });
    // failures=3 → base 4000 ms, jitter 0 → 2000 ms.
    expect(Date.parse((err as { nextTryAt: string }).nextTryAt) - clock.now()).toBe(2000);

    clock.t += 60_000;
    mode = "ok";
    const ok = await pullBundle(e, options(tree, url));
    expect(ok).toMatchObject({ result: "applied" });
    expect(readState(tree.stateDir).highWater).toBe(2);
    const pullState = JSON.parse(readFileSync(join(tree.stateDir, "pull.json"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(pullState).toEqual({ etag: '"x"', failures: 0, nextTryAt: null });
  });

  it("a server that is down counts as a failure", async () => {
    const tree = unitTree("vendd-pull-");
    writeFileSync(tree.configFile, unitConfig(tree, [key]));
    const url = await serve((_req, res) => res.end());
    await new Promise<void>((resolve) => servers.pop()?.close(() => resolve()));
    const r = await pullBundle(env(tree, new JumpClock()), options(tree, url));
    expect(r).toMatchObject({ result: "failed", failures: 1 });
    expect((r as { reason: string }).reason).toContain("ECONNREFUSED");
  });

  it("signs the conditional GET with the unit's fleet key when it has one", async () => {
    const tree = unitTree("vendd-pull-");
    writeFileSync(tree.configFile, unitConfig(tree, [key]));
    const unit = generateUnitKey();
    const seen: { ok: boolean; key: string | null; etag: string | undefined }[] = [];
    const url = await serve((req, res) => {
      const v = verifyRequest(req.method ?? "", req.url ?? "", req.headers, "", Date.now());
      seen.push({ ok: v.ok, key: v.ok ? v.publicKey : null, etag: req.headers["if-none-match"] as string });
      res.writeHead(304).end();
    });
    const r = await pullBundle(env(tree, new JumpClock()), {
      ...options(tree, `${url}/api/unit/v1/bundle?x=1`),
      key: unit,
    });
    expect(r).toEqual({ result: "not_modified" });
    expect(seen).toEqual([{ ok: true, key: unit.publicKey, etag: undefined }]);
  });
});
