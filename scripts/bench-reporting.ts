/**
 * Reporting bench of the payment-service emulator (issue 15 acceptance; `npm run bench -- reporting`, or
 * `node dist/scripts/bench-reporting.js` after `npm run build`): one day of 100,000 transaction lines on one
 * payment point (40,000 payments, each with its TransactionFee, and 20,000 refunds, recorded in the one ledger
 * as the interfaces record them), then, over HTTP on 127.0.0.1 with the three required headers:
 * 1. the day's time-range report walked in pages of 1000 with `pageToken` (the first page also reads the
 *    100,000 ledger entries into the reporting books) → total ms (target < 2,000);
 * 2. after the transfer cut-off, the day's transfer contents (v1) walked the same way → total ms (< 2,000);
 * 3. the slowest single page of both walks → ms.
 * The emulator runs in process (the client shares its event loop, so the figures include both sides).
 */
import { randomUUID } from "node:crypto";
import { Agent, request } from "undici";
import { type Emulator, startEmulator } from "../src/emulator/index.js";
import { type BenchFigure, runFiguresWhenMain } from "./benchFigure.js";

const PAYMENTS = 40_000;
const REFUNDS = 20_000;
const LINES = PAYMENTS * 2 + REFUNDS;
/** Where the bench keeps the refresh token next to the headers; never sent (stripped by `sent`). */
const REFRESH = "refresh-token (not sent)";
const DAY_START = Date.parse("2026-11-24T00:00:00Z");

async function json(
  agent: Agent,
  url: string,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const sent = Object.fromEntries(Object.entries(headers).filter(([k]) => k !== REFRESH));
  const res = await request(url, { headers: sent, dispatcher: agent });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${url} → ${res.statusCode} ${text.slice(0, 200)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Walks `url` page by page; returns the total lines, the page count and the slowest page in ms. */
async function walk(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
): Promise<{ lines: number; pages: number; slowestMs: number }> {
  let lines = 0;
  let pages = 0;
  let slowestMs = 0;
  let token: string | null = null;
  do {
    const started = performance.now();
    const sep = url.includes("?") ? "&" : "?";
    const page = await json(
      agent,
      token === null ? url : `${url}${sep}pageToken=${encodeURIComponent(token)}`,
      headers,
    );
    slowestMs = Math.max(slowestMs, performance.now() - started);
    lines += (page.transactions as unknown[]).length;
    pages += 1;
    token = typeof page.nextPageToken === "string" ? page.nextPageToken : null;
  } while (token !== null);
  return { lines, pages, slowestMs };
}

/** The OpenID Connect login (code flow, simulated consent) → the three required headers. */
async function login(emu: Emulator, agent: Agent): Promise<Record<string, string>> {
  const { clientId, clientSecret } = emu.info.reporting;
  const origin = emu.info.v10.baseUrl;
  const redirect = "https://bench.example/cb";
  const auth = await request(
    `${origin}/merchant-authentication-openidconnect/connect/authorize?${new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirect,
      response_type: "code",
      scope: "openid transactionreporting offline_access",
    })}`,
    { dispatcher: agent },
  );
  await auth.body.text();
  const location = String(auth.headers.location ?? "");
  const code = new URL(location).searchParams.get("code") ?? "";
  const tokenRes = await request(`${origin}/merchant-authentication-openidconnect/connect/token`, {
    method: "POST",
    dispatcher: agent,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirect,
      client_id: clientId,
      client_secret: clientSecret,
    }).toString(),
  });
  const tokens = (await tokenRes.body.json()) as { access_token: string; refresh_token: string };
  return {
    authorization: `Bearer ${tokens.access_token}`,
    "x-gateway-client-id": clientId,
    "x-gateway-client-secret": clientSecret,
    [REFRESH]: tokens.refresh_token,
  };
}

/** The refresh grant (rotating): new bearer and refresh token. */
async function refresh(
  emu: Emulator,
  agent: Agent,
  headers: Record<string, string>,
): Promise<Record<string, string>> {
  const { clientId, clientSecret } = emu.info.reporting;
  const res = await request(`${emu.info.v10.baseUrl}/merchant-authentication-openidconnect/connect/token`, {
    method: "POST",
    dispatcher: agent,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: headers[REFRESH] ?? "",
      client_id: clientId,
      client_secret: clientSecret,
    }).toString(),
  });
  const tokens = (await res.body.json()) as { access_token: string; refresh_token: string };
  return { authorization: `Bearer ${tokens.access_token}`, [REFRESH]: tokens.refresh_token };
}

function cpuMs(u: NodeJS.CpuUsage): number {
  return (u.user + u.system) / 1000;
}

export async function benchReporting(): Promise<BenchFigure[]> {
  let now = DAY_START + 1800_000;
  const emu = await startEmulator({ startTime: now, timeSource: () => now - DAY_START });
  const agent = new Agent({ connections: 1 });
  try {
    const merchant = emu.info.reporting.merchantId;
    const point = randomUUID();
    // Logged in before the day, so that no login reads the ledger outside the timed walk.
    const headers = await login(emu, agent);
    // 60,000 ledger entries spread over 22 h of the day, in time order as the interfaces append them.
    const step = Math.floor((22 * 3600_000) / (PAYMENTS + REFUNDS));
    for (let i = 0; i < PAYMENTS + REFUNDS; i++) {
      const refund = i % 3 === 2;
      emu.recordLedger({
        interface: "online",
        id: randomUUID(),
        paymentId: null,
        orderId: `order-${i}`,
        kind: refund ? "refunded" : "captured",
        amount: refund ? 500 : 1000 + (i % 1000),
        merchant,
        point,
      });
      now += step;
    }
    // The day is over: the access token has expired; the refresh grant does not touch the books.
    Object.assign(headers, await refresh(emu, agent, headers));
    const base = `${emu.info.reporting.baseUrl}/v1/paymentpoints/${point}`;

    let cpu = process.cpuUsage();
    let started = performance.now();
    const day = await walk(
      agent,
      `${base}/transactions?from=2026-11-24T00:00:00Z&to=2026-11-25T00:00:00Z`,
      headers,
    );
    const dayMs = performance.now() - started;
    const dayCpuMs = cpuMs(process.cpuUsage(cpu));
    if (day.lines !== LINES)
      throw new Error(`time-range report listed ${day.lines} lines, expected ${LINES}`);

    emu.reporting.advanceToCutoff();
    Object.assign(headers, await refresh(emu, agent, headers));
    const refs = await json(agent, `${base}/transfer-references?from=2026-11-25&to=2026-11-25`, headers);
    const ref = (refs.transferReferences as { transferReference: string }[])[0]?.transferReference;
    if (ref === undefined) throw new Error("no transfer was made at the cut-off");
    cpu = process.cpuUsage();
    started = performance.now();
    const transfer = await walk(agent, `${base}/transfers/${ref}`, headers);
    const transferMs = performance.now() - started;
    const transferCpuMs = cpuMs(process.cpuUsage(cpu));
    if (transfer.lines !== LINES)
      throw new Error(`transfer listed ${transfer.lines} lines, expected ${LINES}`);

    const r = (x: number): number => Math.round(x * 10) / 10;
    return [
      {
        name: "dayReportWalk",
        figure: r(dayMs),
        unit: `ms (${day.pages} pages, ${day.lines} lines)`,
        target: "< 2000 ms",
        pass: dayMs < 2000,
      },
      {
        name: "dayReportWalkCpu",
        figure: r(dayCpuMs),
        unit: "ms CPU (client and emulator, one process; wall time above depends on machine load)",
        target: "< 2000 ms",
        pass: dayCpuMs < 2000,
      },
      {
        name: "transferContentsWalk",
        figure: r(transferMs),
        unit: `ms (${transfer.pages} pages)`,
        target: "< 2000 ms",
        pass: transferMs < 2000,
      },
      {
        name: "transferContentsWalkCpu",
        figure: r(transferCpuMs),
        unit: "ms CPU",
        target: "< 2000 ms",
        pass: transferCpuMs < 2000,
      },
      {
        name: "slowestPage",
        figure: r(Math.max(day.slowestMs, transfer.slowestMs)),
        unit: "ms",
        target: "< 200 ms",
        pass: Math.max(day.slowestMs, transfer.slowestMs) < 200,
      },
    ];
  } finally {
    await agent.destroy();
    await emu.close();
  }
}

runFiguresWhenMain(import.meta.url, benchReporting);
