import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentRefreshToken, emulatorEndpoints, seedDay } from "../../../scripts/reconcileDay.js";
import { type Emulator, startEmulator } from "../../emulator/index.js";
import { parseCsv, ReportingClient, ReportingClientError, signedDecimal } from "./client.js";

/**
 * The reporting client against the emulator (issue 17): 1,300 vends (≈ 2,900 lines: several pages of 1000),
 * page tokens carrying `/`, `+` and `=`, an access token expiring in the middle of paging (refreshed once,
 * the refresh token rotated and handed to the caller), transfer contents v1, v2 JSON and v2 CSV giving the
 * same lines, a 500 repeated under the retry policy, and no secret in an error.
 */
const DAY = "2026-11-24";

describe("reporting client against the emulator", () => {
  let emu: Emulator;
  let refreshToken = "";
  let point = "";
  const rotated: string[] = [];

  function client(over: Partial<ConstructorParameters<typeof ReportingClient>[0]> = {}): ReportingClient {
    return new ReportingClient({
      ...emulatorEndpoints(emu),
      clientId: emu.info.reporting.clientId,
      clientSecret: emu.info.reporting.clientSecret,
      refreshToken,
      onRefreshToken: (t) => {
        refreshToken = t;
        rotated.push(t);
      },
      sleep: async () => {},
      ...over,
    });
  }

  beforeAll(async () => {
    emu = await startEmulator({ timeSource: () => 0, startTime: Date.parse(`${DAY}T00:00:00Z`) });
    point = emu.info.reporting.paymentPointId;
    seedDay(emu, { vends: 1300, units: 4, stepMs: 60_000 });
    refreshToken = await consentRefreshToken(emu);
  });
  afterAll(() => emu.close());

  it("walks > 1000 lines in pages with tokens carrying / + =, refreshing the token mid-way", async () => {
    const tokens: string[] = [];
    let c: ReportingClient | null = null;
    c = client({
      onPage: (_kind, page, next) => {
        if (next !== null) tokens.push(next);
        // The access token expires while paging: the gateway answers 401 invalid_token.
        if (page === 1) emu.clock.advance(3601_000);
      },
    });
    const lines = await c.transactions(point, `${DAY}T00:00:00Z`, "2026-11-25T00:00:00Z");
    expect(lines.length).toBeGreaterThan(2000);
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    expect(tokens.some((t) => t.includes("/") && t.includes("+") && t.includes("="))).toBe(true);
    expect(c.refreshes).toBe(2);
    expect(rotated.length).toBeGreaterThanOrEqual(2);
    const payments = lines.filter((l) => l.type === "Payment");
    expect(payments).toHaveLength(1300);
    expect(payments.every((l) => l.amount > 0 && Number.isSafeInteger(l.amount))).toBe(true);
    expect(lines.filter((l) => l.type === "Refund").every((l) => l.amount < 0)).toBe(true);
    expect(new Set(lines.map((l) => `${l.paymentTransactionId}|${l.type}`)).size).toBe(lines.length);
    await c.close();
  });

  it("transfer contents v1, v2 JSON and v2 CSV list the same lines, summing to the transfer", async () => {
    emu.reporting.advanceToCutoff();
    const c = client();
    const points = await c.paymentPoints();
    expect(points.map((p) => p.paymentPointId)).toContain(point);
    const refs = await c.transferReferences(point, "2026-11-25", "2026-11-25");
    expect(refs).toHaveLength(1);
    const ref = refs[0];
    if (ref === undefined) throw new Error("no transfer");
    const v1 = await c.transferContents(point, ref.transferReference, 1);
    const v2 = await c.transferContents(point, ref.transferReference, 2, "json");
    const csv = await c.transferContents(point, ref.transferReference, 2, "csv");
    expect(v1.length).toBeGreaterThan(2000);
    const key = (l: (typeof v1)[number]) =>
      `${l.type}|${l.amount}|${l.paymentTransactionId}|${l.orderId}|${l.timestamp}|${l.transferReference}`;
    expect(v2.map(key)).toEqual(v1.map(key));
    expect(csv.map(key)).toEqual(v1.map(key));
    expect(v1.reduce((s, l) => s + l.amount, 0)).toBe(ref.amount);
    await c.close();
  });

  it("a 500 is repeated under the retry policy; a refused client names no secret", async () => {
    emu.faults.add({ path: "/transaction-reporting/api/merchant/v1/paymentpoints", fault: "500", count: 1 });
    const c = client();
    await expect(c.paymentPoints()).resolves.toHaveLength(1);
    expect(c.requests).toBe(3); // token exchange, the 500, the repeat
    await c.close();

    const bad = client({ clientSecret: "wrong-secret-value-123" });
    const e = await bad.paymentPoints().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ReportingClientError);
    const text = String((e as Error).message);
    expect(text).not.toContain("wrong-secret-value-123");
    expect(text).not.toContain(refreshToken);
    await bad.close();
  });

  it("CSV and signed decimals are read exactly", () => {
    expect(parseCsv('a,b\r\n"x,""y""",-12.50\r\n')).toEqual([
      ["a", "b"],
      ['x,"y"', "-12.50"],
    ]);
    expect(signedDecimal("-12.50")).toBe(-1250);
    expect(signedDecimal("0.07")).toBe(7);
    expect(() => signedDecimal("1.005")).toThrow();
  });
});
