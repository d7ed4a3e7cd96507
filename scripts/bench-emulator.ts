/**
 * Load bench of the payment-service emulator (issue acceptance; run after `npm run build`:
 * `node dist/scripts/bench-emulator.js`). The emulator runs in a child process so that the load generator
 * does not share its event loop; all traffic goes to 127.0.0.1.
 * 1. open loop: 1,000 PoSes, each on its own keep-alive connection, poll GET /v10/payments/{id} once per
 *    second (the pollDelayInMs) for ~10 s after a 2 s warm-up (connection setup, JIT) → latency
 *    percentiles (target p99 < 5 ms);
 * 2. closed loop: 100 connections polling back to back for ~5 s → polls/s (target ≥ 7,000);
 * 3. memory: 100,000 payments initiated and cancelled while emulator time advances 6 h per 10,000, so the
 *    25 h retention purges old ones → heap after GC at each 10,000 (target: flat).
 */

import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";
import { Client, Pool } from "undici";

interface Info {
  v10: {
    baseUrl: string;
    tokenUrl: string;
    clientId: string;
    clientSecret: string;
    storeId: string;
    merchantVat: string;
  };
  admin: string;
}

const CHILD = `
const m = await import(process.env.EMULATOR_MODULE);
const emu = await m.startEmulator({ pollDelayMs: 1000 });
process.send({ info: emu.info });
process.on("message", async (msg) => {
  if (msg === "heap") { globalThis.gc(); globalThis.gc(); process.send({ heap: process.memoryUsage().heapUsed }); }
  if (msg === "close") { await emu.close(); process.send({ closed: true }); process.disconnect(); }
});
`;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const round = (n: number): number => Math.round(n * 1000) / 1000;

class Api {
  token = "";
  constructor(
    readonly info: Info,
    readonly pool: Pool,
  ) {}

  headers(key?: string): Record<string, string> {
    const h: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      "x-service-merchant-vat-number": this.info.v10.merchantVat,
      "x-service-client-system-name": "vendd-bench",
      "x-service-client-system-version": "1.0.0",
      "content-type": "application/json",
    };
    if (key) h["x-service-idempotency-key"] = key;
    return h;
  }

  async refreshToken(): Promise<void> {
    const basic = Buffer.from(`${this.info.v10.clientId}:${this.info.v10.clientSecret}`).toString("base64");
    const r = await this.pool.request({
      method: "POST",
      path: new URL(this.info.v10.tokenUrl).pathname,
      headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
    });
    this.token = ((await r.body.json()) as { access_token: string }).access_token;
  }

  async post(path: string, body: unknown, key?: string): Promise<Record<string, string>> {
    const r = await this.pool.request({
      method: "POST",
      path,
      headers: this.headers(key),
      body: JSON.stringify(body),
    });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`POST ${path} → ${r.statusCode} ${text}`);
    return text === "" ? {} : (JSON.parse(text) as Record<string, string>);
  }
}

async function setupPayments(api: Api, count: number): Promise<{ posIds: string[]; paymentIds: string[] }> {
  const posIds: string[] = [];
  const paymentIds: string[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, async () => {
        const { posId = "" } = await api.post(
          "/v10/pointofsales",
          {
            merchantPosId: randomUUID(),
            storeId: api.info.v10.storeId,
            name: "bench",
            supportedBeaconTypes: ["QR"],
          },
          randomUUID(),
        );
        const { paymentId = "" } = await api.post(
          "/v10/payments",
          { posId, orderId: randomUUID(), amount: 10, currencyCode: "DKK", plannedCaptureDelay: "None" },
          randomUUID(),
        );
        return { posId, paymentId };
      }),
    );
    for (const b of batch) {
      posIds.push(b.posId);
      paymentIds.push(b.paymentId);
    }
  }
  return { posIds, paymentIds };
}

async function openLoop(api: Api, paymentIds: string[], seconds: number): Promise<Record<string, number>> {
  const origin = api.info.v10.baseUrl;
  const clients = paymentIds.map(() => new Client(origin, { keepAliveTimeout: 30_000, pipelining: 1 }));
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  // The first two rounds open the 1,000 connections and warm the JIT; they are not measured.
  const warmupMs = 2000;
  const headers = api.headers();
  await Promise.all(
    paymentIds.map(async (id, i) => {
      const client = clients[i];
      if (!client) return;
      const offset = (i / paymentIds.length) * 1000;
      for (let round = 0; round < seconds + 2; round++) {
        const due = start + offset + round * 1000;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const t0 = performance.now();
        try {
          const r = await client.request({ method: "GET", path: `/v10/payments/${id}`, headers });
          await r.body.dump();
          if (r.statusCode !== 200) errors += 1;
        } catch {
          errors += 1;
        }
        if (t0 - start >= warmupMs) latencies.push(performance.now() - t0);
      }
    }),
  );
  await Promise.all(clients.map((c) => c.close()));
  latencies.sort((a, b) => a - b);
  return {
    openLoopPolls: latencies.length,
    openLoopErrors: errors,
    openLoopP50Ms: round(percentile(latencies, 50)),
    openLoopP99Ms: round(percentile(latencies, 99)),
    openLoopMaxMs: round(latencies[latencies.length - 1] ?? Number.NaN),
    openLoopOver5Ms: latencies.filter((l) => l > 5).length,
  };
}

async function closedLoop(api: Api, paymentIds: string[], seconds: number): Promise<Record<string, number>> {
  const pool = new Pool(api.info.v10.baseUrl, { connections: 100, pipelining: 1 });
  const headers = api.headers();
  const end = performance.now() + seconds * 1000;
  let done = 0;
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 100 }, async (_, lane) => {
      for (let i = 0; performance.now() < end && i < 10_000_000; i++) {
        const id = paymentIds[(lane * 10 + i) % paymentIds.length];
        try {
          const r = await pool.request({ method: "GET", path: `/v10/payments/${id}`, headers });
          await r.body.dump();
          if (r.statusCode === 200) done += 1;
          else errors += 1;
        } catch {
          errors += 1;
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  await pool.close();
  return { closedLoopPollsPerS: Math.round(done / elapsed), closedLoopErrors: errors };
}

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve) => child.once("message", (m) => resolve(m as T)));
}

async function memory(
  api: Api,
  child: ChildProcess,
  total: number,
): Promise<Record<string, number | string>> {
  const heap = async (): Promise<number> => {
    const answer = nextMessage<{ heap: number }>(child);
    child.send("heap");
    return (await answer).heap;
  };
  const lanes = 100;
  const setup = await setupPayments(api, lanes);
  for (const id of setup.paymentIds) await api.post(`/v10/payments/${id}/cancel`, undefined);
  const samples: number[] = [];
  const step = 10_000;
  for (let doneCount = 0; doneCount < total; doneCount += step) {
    await Promise.all(
      setup.posIds.map(async (posId) => {
        for (let i = 0; i < step / lanes; i++) {
          const { paymentId = "" } = await api.post(
            "/v10/payments",
            { posId, orderId: randomUUID(), amount: 1, currencyCode: "DKK", plannedCaptureDelay: "None" },
            randomUUID(),
          );
          await api.post(`/v10/payments/${paymentId}/cancel`, undefined);
        }
      }),
    );
    const adv = await api.pool.request({
      method: "POST",
      path: "/_admin/clock/advance",
      body: JSON.stringify({ ms: 6 * 3600_000 }),
    });
    await adv.body.dump();
    await api.refreshToken();
    samples.push(await heap());
  }
  const mb = (n: number): number => Math.round((n / 1048576) * 10) / 10;
  const half = samples[Math.floor(samples.length / 2) - 1] ?? Number.NaN;
  const last = samples[samples.length - 1] ?? Number.NaN;
  return {
    memoryPayments: total,
    memoryHeapMbBySample: samples.map(mb).join(","),
    memoryHeapMbAtHalf: mb(half),
    memoryHeapMbAtEnd: mb(last),
  };
}

/** Runs the three phases and returns their figures. */
export async function benchEmulator(): Promise<Record<string, number | string>> {
  const url = new URL("../src/emulator/index.js", import.meta.url).href;
  const child = spawn(process.execPath, ["--expose-gc", "--input-type=module", "-e", CHILD], {
    env: { ...process.env, EMULATOR_MODULE: url },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const { info } = await nextMessage<{ info: Info }>(child);
  const pool = new Pool(info.v10.baseUrl, { connections: 100 });
  const api = new Api(info, pool);
  try {
    await api.refreshToken();
    const { paymentIds } = await setupPayments(api, 1000);
    const open = await openLoop(api, paymentIds, 10);
    const closed = await closedLoop(api, paymentIds, 5);
    const mem = await memory(api, child, 100_000);
    return { ...open, ...closed, ...mem };
  } finally {
    await pool.close();
    const closed = nextMessage<unknown>(child);
    child.send("close");
    await closed;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchEmulator().then(
    (figures) => process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`),
    (e: unknown) => {
      process.stderr.write(`bench-emulator: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
