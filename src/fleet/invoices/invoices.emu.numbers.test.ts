/**
 * Company invoice numbers against the in-process emulator (seed 002 §Invoices): two invoice runs at once
 * give one invoice per company, numbered sequentially per issuer without gaps. Needs `openssl` (the test
 * certificate), as the emulator's own invoice tests.
 */
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../core/clock.js";
import type { Emulator } from "../../emulator/index.js";
import { hasOpenssl } from "../../emulator/testing/httpsReceiver.js";
import type { InvoicesClient } from "../../payment/invoices/client.js";
import type { FleetContext } from "../context.js";
import type { FleetDb } from "../db/open.js";
import { runInvoiceCycle } from "./cycle.js";
import {
  addSale,
  addUnit,
  closeInvoicesEmu,
  fleet,
  START,
  startInvoicesEmu,
  USER,
} from "./invoices.emu.test-support.js";
import { assignUnit, createCompany, invoicesDb, setProduct } from "./store/invoices.js";

describe.skipIf(!hasOpenssl())("company invoice numbers against the emulator", () => {
  let emu: Emulator;
  let app: FastifyInstance;
  let client: InvoicesClient;
  let issuer: string;
  const clock = new ManualClock(START);
  let f: { ctx: FleetContext; db: FleetDb };

  beforeAll(async () => {
    ({ emu, app, client, issuer, f } = await startInvoicesEmu(clock));
  });

  afterAll(async () => {
    await closeInvoicesEmu({ emu, app, client, f });
  });

  it("two runs at once: one invoice per company, numbers sequential per issuer without gaps", async () => {
    const clock2 = new ManualClock(START);
    const g = await fleet(clock2);
    try {
      for (let i = 0; i < 8; i++) {
        await addUnit(g.ctx, `c${i}`);
        const id = await createCompany(g.ctx, {
          name: `Company ${i}`,
          orgNumber: `DK1000000${i}`,
          delivery: "direct",
          phone: USER,
          issuerId: issuer,
        });
        await assignUnit(g.ctx, id, `c${i}`);
        await addSale(g.ctx, `c${i}`, "2026-03-10", 1, i + 1);
      }
      await setProduct(g.ctx, { item: 1, name: "Coffee", vatBp: 2500, price: 1500 });
      // Another fleet may already hold low numbers of this issuer at the emulator: start this one at 100.
      await invoicesDb(g.ctx)
        .insertInto("invoice_numbers")
        .values({ issuer_id: issuer, last_number: 100 })
        .execute();
      const [a, b] = await Promise.all([
        runInvoiceCycle(g.ctx, client, "2026-03", START),
        runInvoiceCycle(g.ctx, client, "2026-03", START),
      ]);
      expect(a.created.length + b.created.length).toBe(8);
      expect(a.sent.length + b.sent.length).toBe(8);
      expect([...a.sendErrors, ...b.sendErrors]).toEqual([]);
      const rows = await invoicesDb(g.ctx).selectFrom("invoices").selectAll().orderBy("number").execute();
      expect(rows.map((r) => r.number)).toEqual([101, 102, 103, 104, 105, 106, 107, 108]);
      expect(new Set(rows.map((r) => r.company_id)).size).toBe(8);
      expect(new Set(rows.map((r) => r.remote_id)).size).toBe(8);
      expect(rows.every((r) => r.status === "sent")).toBe(true);
    } finally {
      await g.db.close();
    }
  });
});
