/**
 * Member entitlements at the unit (issue 18), the store: it refuses lists not signed by the entitlement key,
 * expired or tampered ones (the previous list stays); install, lookup, watch and the list's periods.
 * Plan vends at the unit are in entitlements.plan-vends.test.ts.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { ManualClock } from "../core/clock.js";
import { signEntitlements } from "../update/entitlements.js";
import { parsePublicKey } from "../update/minisign.js";
import { EntitlementStore, loadEntitlementKey, periodsOf, StaleListError } from "./entitlements.js";
import {
  capture,
  configKey,
  entKey,
  list,
  OTHER_UID,
  storeAt,
  strangerKey,
  T0,
  tempDir,
  UID,
  UID_UPPER,
  useEntitlementFixtures,
} from "./entitlements.test-support.js";

useEntitlementFixtures();

describe("entitlement store", () => {
  it("refuses lists signed by a config key or an unknown key, expired or tampered; the previous list stays", async () => {
    const dir = tempDir();
    const file = join(dir, "entitlements.json");
    const clock = new ManualClock(T0);
    const { logger, lines } = capture();
    const store = storeAt(file, clock, logger);
    expect(store.load()).toBe("missing");
    const write = (signed: { document: string; signature: string }) =>
      writeFileSync(file, JSON.stringify(signed));

    write(signEntitlements(list({ serial: 7 }), configKey.sk));
    expect(store.load()).toBe("wrongKey");
    write(signEntitlements(list({ serial: 7 }), strangerKey.sk));
    expect(store.load()).toBe("wrongKey");
    write(signEntitlements(list({ serial: 7, validUntil: T0 - 1 }), entKey.sk));
    expect(store.load()).toBe("expired");
    const good = signEntitlements(list({ serial: 7 }), entKey.sk);
    write({ document: good.document.replace('"items":2', '"items":9'), signature: good.signature });
    expect(store.load()).toBe("signature");
    expect(store.current()).toBeNull();
    expect(await store.lookup(UID)).toBeNull();

    write(good);
    expect(store.load()).toBeNull();
    expect(store.current()?.serial).toBe(7);
    // A refused file later: the list in force stays.
    write(signEntitlements(list({ serial: 8 }), configKey.sk));
    expect(store.load()).toBe("wrongKey");
    expect(store.current()?.serial).toBe(7);
    expect((await store.lookup(UID))?.member.memberId).toBe("m-1");
    expect(lines.filter((l) => l.includes("entitlement list refused")).length).toBe(5);
    expect(lines.some((l) => l.includes('"code":"wrongKey"'))).toBe(true);

    // Until it expires: then it is not used, members fall back to the normal flow.
    clock.advance(7 * 86_400_000);
    expect(store.current()).toBeNull();
    expect(await store.lookup(UID)).toBeNull();
  });

  it("install verifies, refuses a lower serial, writes the file atomically; the key loads from a line or a .pub file", () => {
    const dir = tempDir();
    const file = join(dir, "entitlements.json");
    const clock = new ManualClock(T0);
    const store = storeAt(file, clock, pino({ level: "silent" }));
    const s9 = signEntitlements(list({ serial: 9 }), entKey.sk);
    store.install(s9.document, s9.signature);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(s9);
    const s8 = signEntitlements(list({ serial: 8 }), entKey.sk);
    expect(() => store.install(s8.document, s8.signature)).toThrow(StaleListError);
    const bad = signEntitlements(list({ serial: 10 }), configKey.sk);
    expect(() => store.install(bad.document, bad.signature)).toThrow(/not signed by the entitlement key/);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(s9);
    // A new store reads what install wrote.
    const again = storeAt(file, clock, pino({ level: "silent" }));
    expect(again.load()).toBeNull();
    expect(again.current()?.serial).toBe(9);

    const pub = join(dir, "entitlement.pub");
    writeFileSync(pub, entKey.publicKeyText);
    expect(loadEntitlementKey(pub).raw).toEqual(loadEntitlementKey(entKey.line).raw);
  });

  it("finds a member only at its units, in its validity, by the hash of the normalised UID (either case)", async () => {
    const dir = tempDir();
    const clock = new ManualClock(T0);
    const store = storeAt(join(dir, "e.json"), clock, pino({ level: "silent" }));
    const s = signEntitlements(list(), entKey.sk);
    store.install(s.document, s.signature);
    expect((await store.lookup(UID))?.member.memberId).toBe("m-1");
    expect((await store.lookup(UID_UPPER))?.member.memberId).toBe("m-1");
    expect(await store.lookup(OTHER_UID)).toBeNull();
    const elsewhere = new EntitlementStore({
      publicKey: parsePublicKey(entKey.publicKeyText),
      listFile: join(dir, "e.json"),
      unitId: "vm-other",
      clock,
      logger: pino({ level: "silent" }),
    });
    elsewhere.load();
    expect(await elsewhere.lookup(UID)).toBeNull();
  });

  it("re-reads the list file when it changes (watch), keeping the list in force on a refused one", async () => {
    const dir = tempDir();
    const file = join(dir, "entitlements.json");
    const store = storeAt(file, new ManualClock(T0), pino({ level: "silent" }));
    const stop = store.watch();
    try {
      writeFileSync(file, JSON.stringify(signEntitlements(list({ serial: 3 }), entKey.sk)));
      await vi.waitFor(() => expect(store.current()?.serial).toBe(3), { timeout: 5000 });
      writeFileSync(file, JSON.stringify(signEntitlements(list({ serial: 4 }), configKey.sk)));
      writeFileSync(file, JSON.stringify(signEntitlements(list({ serial: 5 }), entKey.sk)));
      await vi.waitFor(() => expect(store.current()?.serial).toBe(5), { timeout: 5000 });
    } finally {
      stop();
    }
  });

  it("counts days and months in the list's time zone", () => {
    // 23:30 UTC on 30 November is 1 December in Oslo.
    expect(periodsOf(Date.UTC(2026, 10, 30, 23, 30), "Europe/Oslo")).toEqual({
      day: "2026-12-01",
      month: "2026-12",
    });
    expect(periodsOf(Date.UTC(2026, 10, 30, 23, 30), "UTC")).toEqual({ day: "2026-11-30", month: "2026-11" });
  });
});
