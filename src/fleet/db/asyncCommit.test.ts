import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { openFleetDb } from "../database.js";
import { lightTransaction } from "./asyncCommit.js";
import type { FleetDb } from "./open.js";

describe("light transactions (SQLite)", () => {
  let fleet: FleetDb | null = null;
  let dir = "";
  afterEach(async () => {
    await fleet?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("commit with synchronous=NORMAL and leave the connection at FULL, also after a throw", async () => {
    dir = mkdtempSync(join(tmpdir(), "vendd-light-"));
    fleet = await openFleetDb(join(dir, "fleet.db"));
    const db = fleet.db;
    const level = async (q: typeof db | Parameters<Parameters<typeof lightTransaction>[2]>[0]) =>
      Number((await sql<{ synchronous: number }>`pragma synchronous`.execute(q)).rows[0]?.synchronous);
    expect(await level(db)).toBe(2); // FULL
    const inside = await lightTransaction(db, "sqlite", async (trx) => {
      await trx.insertInto("nonces").values({ public_key: "k", nonce: "n", expires_at: 1 }).execute();
      return level(trx);
    });
    expect(inside).toBe(1); // NORMAL
    expect(await level(db)).toBe(2);
    await expect(
      lightTransaction(db, "sqlite", async (trx) => {
        await trx.insertInto("nonces").values({ public_key: "k", nonce: "m", expires_at: 1 }).execute();
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await level(db)).toBe(2);
    const rows = await db.selectFrom("nonces").select("nonce").execute();
    expect(rows.map((r) => r.nonce)).toEqual(["n"]); // the throw rolled its insert back
  });
});
