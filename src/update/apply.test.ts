/**
 * Applying bundles in-process, with the restart and the daemon's health injected: every refusal leaves
 * the config, the release and the high-water mark as they were and says why; an unhealthy new config is
 * rolled back to the last known good; a release switches `current` whole and back.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { applyBundleFile, applyInbox, applyLocalConfig, recoverInterrupted } from "./apply.js";
import { applyHarness, type Harness, HEALTHY } from "./applyHarness.test-support.js";
import { createBundle } from "./bundle.js";
import { EMPTY_STATE, readState, readUpdateOutcome, writeState } from "./state.js";
import {
  JumpClock,
  makeKey,
  releaseTarball,
  signedBundle,
  signWith,
  type TestKey,
  unitConfig,
} from "./update.test-support.js";

let k1: TestKey;
let k2: TestKey;
beforeAll(async () => {
  [k1, k2] = await Promise.all([makeKey("one"), makeKey("two")]);
});

/** The harness with this file's two keys trusted unless a test names others. */
function harness(opts: { threshold?: number; keys?: TestKey[] } = {}): Harness {
  return applyHarness({ keys: [k1, k2], ...opts });
}

function configV(h: Harness, name: string, extra: Parameters<typeof unitConfig>[2] = {}): string {
  return unitConfig(h.tree, [k1, k2], { name, ...extra });
}

describe("apply: commit, and refusals that change nothing", () => {
  it("commits a newer, in-scope, valid bundle and raises the high-water mark", async () => {
    const h = harness();
    const before = readFileSync(h.tree.configFile, "utf8");
    const file = h.bundle(
      "b2.vbundle",
      signedBundle([k1], { version: 2, configText: configV(h, "Vending 2") }),
    );
    const r = await applyBundleFile(file, h.env);
    expect(r.outcomes[0]).toMatchObject({ result: "committed", version: 2, kind: "config" });
    expect(h.nameInForce()).toBe("Vending 2");
    expect(h.restarts).toEqual(["Vending 2"]);
    expect(readState(h.tree.stateDir)).toMatchObject({ highWater: 2, pending: null });
    expect(readFileSync(join(h.tree.stateDir, "last-good.yaml"), "utf8")).toBe(before);
    expect(readUpdateOutcome(h.tree.stateDir)).toMatchObject({
      highWater: 2,
      pending: null,
      outcome: { result: "committed", version: 2 },
      problem: null,
    });
  });

  it("refuses older, equal, expired, wrong target, invalid config, lock-out and truncated, each with its reason", async () => {
    const h = harness();
    await applyBundleFile(
      h.bundle("b5.vbundle", signedBundle([k1], { version: 5, configText: configV(h, "V5") })),
      h.env,
    );
    const inForce = readFileSync(h.tree.configFile, "utf8");
    const cases: [string, Buffer, string][] = [
      ["older", signedBundle([k1], { version: 4, configText: configV(h, "V4") }), "older"],
      ["equal", signedBundle([k1], { version: 5, configText: configV(h, "V5b") }), "equal"],
      [
        "expired",
        signedBundle([k1], { version: 6, expires: "2029-12-31", configText: configV(h, "V6") }),
        "expired",
      ],
      [
        "target",
        signedBundle([k1], { version: 6, targets: ["fleet-b", "vm-0002"], configText: configV(h, "V6") }),
        "wrong_target",
      ],
      [
        "invalid",
        signedBundle([k1], {
          version: 6,
          configText: configV(h, "V6").replace('"vm-0001"', '"not a valid id!"'),
        }),
        "invalid_config",
      ],
      [
        "lockout",
        signedBundle([k1], { version: 6, configText: unitConfig(h.tree, [], { name: "V6" }) }),
        "lockout",
      ],
      [
        "truncated",
        signedBundle([k1], { version: 6, configText: configV(h, "V6") }).subarray(0, 1500),
        "truncated",
      ],
      [
        "unsigned",
        createBundle({
          version: 6,
          targets: ["vm-0001"],
          expires: "2099-01-01",
          configText: configV(h, "V6"),
        }).bundle,
        "unsigned",
      ],
    ];
    for (const [name, data, code] of cases) {
      const r = await applyBundleFile(h.bundle(`${name}.vbundle`, data), h.env);
      expect(r.outcomes[0], name).toMatchObject({ result: "refused", code });
      expect(r.outcomes[0]?.reason, name).toBeTruthy();
      expect(readFileSync(h.tree.configFile, "utf8"), name).toBe(inForce);
      expect(readState(h.tree.stateDir), name).toMatchObject({
        highWater: 5,
        pending: null,
        outcome: { code },
      });
    }
    expect(h.restarts).toEqual(["V5"]);
    expect(existsSync(join(h.tree.root, "etc", ".config.yaml.staged"))).toBe(false);
    // A bundle for the unit id (not the fleet) is in scope.
    const byUnit = signedBundle([k1], { version: 6, targets: ["vm-0001"], configText: configV(h, "V6") });
    expect((await applyBundleFile(h.bundle("unit.vbundle", byUnit), h.env)).outcomes[0]).toMatchObject({
      result: "committed",
    });
  });
});

describe("apply: a unit without trusted time", () => {
  it("cannot enforce the expiry: takes a higher version only, and flags the commit", async () => {
    const h = harness();
    h.env.clock = new JumpClock(Date.parse("1970-01-01T00:01:00Z"));
    const expired = signedBundle([k1], {
      version: 2,
      expires: "2020-01-01",
      configText: configV(h, "No RTC"),
    });
    const r = await applyBundleFile(h.bundle("e.vbundle", expired), h.env);
    expect(r.outcomes[0]).toMatchObject({ result: "committed", code: "untrusted_time" });
    expect(r.outcomes[0]?.reason).toContain("was not checked");
    const older = signedBundle([k1], { version: 1, expires: "2099-01-01", configText: configV(h, "Older") });
    expect((await applyBundleFile(h.bundle("o.vbundle", older), h.env)).outcomes[0]).toMatchObject({
      code: "older",
    });
  });
});

describe("apply: health gate and rollback", () => {
  it("rolls back a config that never becomes healthy, reports why, and refuses that version again", async () => {
    const h = harness();
    const before = readFileSync(h.tree.configFile, "utf8");
    const file = h.bundle(
      "b3.vbundle",
      signedBundle([k1], { version: 3, configText: configV(h, "Broken 3") }),
    );
    const r = await applyBundleFile(file, h.env);
    expect(r.outcomes[0]).toMatchObject({ result: "rolled_back", version: 3, code: "unhealthy" });
    expect(r.outcomes[0]?.reason).toContain("VMC link down");
    expect(readFileSync(h.tree.configFile, "utf8")).toBe(before);
    expect(h.restarts).toEqual(["Broken 3", "Vending 1"]);
    expect(readState(h.tree.stateDir)).toMatchObject({ highWater: 0, rolledBack: [3], pending: null });
    const again = await applyBundleFile(file, h.env);
    expect(again.outcomes[0]).toMatchObject({ result: "refused", code: "rolled_back_before" });
    // A fixed config with a new version goes through.
    const fixed = h.bundle(
      "b4.vbundle",
      signedBundle([k1], { version: 4, configText: configV(h, "Fixed 4") }),
    );
    expect((await applyBundleFile(fixed, h.env)).outcomes[0]).toMatchObject({ result: "committed" });
  });

  it("a journal error fails the gate at once; a healthy spell shorter than holdMs is not enough", async () => {
    const h = harness();
    let samples = 0;
    h.health = () => {
      samples++;
      return samples < 4 ? HEALTHY : { ...HEALTHY, journalErrors: 1 };
    };
    const r = await applyBundleFile(
      h.bundle("b.vbundle", signedBundle([k1], { configText: configV(h, "J") })),
      h.env,
    );
    expect(r.outcomes[0]).toMatchObject({ result: "rolled_back", code: "unhealthy" });
    expect(r.outcomes[0]?.reason).toContain("journal reported 1 error");
    expect(h.nameInForce()).toBe("Vending 1");
  });

  it("a failing restart command rolls back", async () => {
    const h = harness();
    let n = 0;
    h.env.restart = async () => {
      if (n++ === 0) throw new Error("restart command failed (1)");
    };
    const r = await applyBundleFile(
      h.bundle("b.vbundle", signedBundle([k1], { configText: configV(h, "R") })),
      h.env,
    );
    expect(r.outcomes[0]).toMatchObject({ result: "rolled_back", reason: "restart command failed (1)" });
    expect(h.nameInForce()).toBe("Vending 1");
  });
});

describe("apply: recovery of a rollback cut short", () => {
  it("keeps the rollback's own code: an interrupted swap does not black-list the version", async () => {
    const h = harness();
    const old = readFileSync(h.tree.configFile, "utf8");
    writeFileSync(join(h.tree.stateDir, "last-good.yaml"), old);
    writeFileSync(h.tree.configFile, configV(h, "Half"));
    writeState(h.tree.stateDir, {
      ...EMPTY_STATE,
      pending: {
        version: 7,
        bundleId: "0123456789abcdef",
        kind: "config",
        phase: "rolling_back",
        startedAt: "2030-01-01T00:00:00.000Z",
        release: null,
        previousRelease: null,
        source: "test",
        reason: "the apply was interrupted during the swap",
        reasonCode: "interrupted",
        local: false,
        note: null,
      },
    });
    const out = await recoverInterrupted(h.env);
    expect(out).toMatchObject({ result: "rolled_back", code: "interrupted", version: 7 });
    expect(readFileSync(h.tree.configFile, "utf8")).toBe(old);
    expect(readState(h.tree.stateDir)).toMatchObject({ pending: null, rolledBack: [], highWater: 0 });
  });
});

describe("apply: releases", () => {
  it("installs a release, switches current whole, keeps the previous one, and switches back on rollback", async () => {
    const h = harness();
    const root = h.tree.releaseRoot;
    mkdirSync(join(root, "releases", "1"), { recursive: true });
    writeFileSync(join(root, "releases", "1", "VERSION"), "one");
    symlinkSync("releases/1", join(root, "current"));
    const rel3 = releaseTarball(h.tree.root, "three");
    const b3 = signedBundle([k1], { version: 3, release: rel3, configText: configV(h, "Release 3") });
    expect((await applyBundleFile(h.bundle("r3.vbundle", b3), h.env)).outcomes[0]).toMatchObject({
      result: "committed",
      kind: "release",
    });
    expect(readlinkSync(join(root, "current"))).toBe("releases/3");
    expect(readFileSync(join(root, "current", "VERSION"), "utf8")).toBe("three");
    expect(existsSync(join(root, "releases", "1", "VERSION"))).toBe(true);

    const b4 = signedBundle([k1], {
      version: 4,
      release: releaseTarball(h.tree.root, "four"),
      configText: configV(h, "Broken 4"),
    });
    const r4 = await applyBundleFile(h.bundle("r4.vbundle", b4), h.env);
    expect(r4.outcomes[0]).toMatchObject({ result: "rolled_back", code: "unhealthy" });
    expect(readlinkSync(join(root, "current"))).toBe("releases/3");
    expect(readFileSync(join(root, "current", "VERSION"), "utf8")).toBe("three");
    expect(h.nameInForce()).toBe("Release 3");
    expect(readState(h.tree.stateDir).highWater).toBe(3);

    // The next good release prunes all but itself and the one before it.
    const b5 = signedBundle([k1], {
      version: 5,
      release: releaseTarball(h.tree.root, "five"),
      configText: configV(h, "Release 5"),
    });
    expect((await applyBundleFile(h.bundle("r5.vbundle", b5), h.env)).outcomes[0]).toMatchObject({
      result: "committed",
    });
    expect(existsSync(join(root, "releases", "1"))).toBe(false);
    expect(existsSync(join(root, "releases", "3"))).toBe(true);
    expect(readFileSync(join(root, "current", "VERSION"), "utf8")).toBe("five");
  });

  it("a refused release tarball (a ../../ member) leaves no partial directory behind", async () => {
    const h = harness();
    const root = h.tree.releaseRoot;
    const src = mkdtempSync(join(h.tree.root, "evil-"));
    writeFileSync(join(src, "x"), "outside\n");
    const evil = execFileSync("tar", ["-czf", "-", "-P", "--transform=s,^x$,../../x,", "-C", src, "x"]);
    const b = signedBundle([k1], { version: 6, release: evil, configText: configV(h, "Evil 6") });
    expect((await applyBundleFile(h.bundle("e6.vbundle", b), h.env)).outcomes[0]).toMatchObject({
      result: "refused",
      code: "bad_release",
    });
    expect(readdirSync(join(root, "releases"))).toEqual([]);
    expect(existsSync(join(root, "x"))).toBe(false);
  });

  it("a release needs updates.threshold distinct keys", async () => {
    const h = harness({ threshold: 2 });
    const { bundle } = createBundle({
      version: 2,
      targets: ["fleet-a"],
      expires: "2099-01-01",
      release: releaseTarball(h.tree.root, "two"),
      configText: unitConfig(h.tree, [k1, k2], { name: "R2", threshold: 2 }),
    });
    const one = await applyBundleFile(h.bundle("one.vbundle", signWith(bundle, [k1])), h.env);
    expect(one.outcomes[0]).toMatchObject({ result: "refused", code: "threshold" });
    expect(existsSync(join(h.tree.releaseRoot, "current"))).toBe(false);
    const two = await applyBundleFile(h.bundle("two.vbundle", signWith(bundle, [k1, k2])), h.env);
    expect(two.outcomes[0]).toMatchObject({ result: "committed" });
  });
});

describe("apply: inbox and local (console) changes", () => {
  it("applies every bundle in the inbox in name order and removes each file once decided", async () => {
    const h = harness();
    writeFileSync(join(h.tree.inbox, "a.vbundle"), Buffer.from("garbage"));
    writeFileSync(
      join(h.tree.inbox, "b.vbundle"),
      signedBundle([k1], { version: 2, configText: configV(h, "Inbox 2") }),
    );
    writeFileSync(join(h.tree.inbox, ".incoming.tmp"), "half written");
    const r = await applyInbox(h.tree.inbox, h.env);
    expect(r.outcomes.map((o) => [o.source, o.result, o.code])).toEqual([
      ["inbox:a.vbundle", "refused", "truncated"],
      ["inbox:b.vbundle", "committed", null],
    ]);
    expect(existsSync(join(h.tree.inbox, "a.vbundle"))).toBe(false);
    expect(existsSync(join(h.tree.inbox, "b.vbundle"))).toBe(false);
    expect(existsSync(join(h.tree.inbox, ".incoming.tmp"))).toBe(true);
  });

  it("a local config goes through the same gate, keeps the high-water mark, and may not touch updates", async () => {
    const h = harness();
    await applyBundleFile(
      h.bundle("b2.vbundle", signedBundle([k1], { version: 2, configText: configV(h, "V2") })),
      h.env,
    );
    const ok = await applyLocalConfig(configV(h, "Local"), h.env);
    expect(ok.outcomes[0]).toMatchObject({ result: "committed", source: "console" });
    expect(h.nameInForce()).toBe("Local");
    expect(readState(h.tree.stateDir).highWater).toBe(2);
    const bad = await applyLocalConfig(unitConfig(h.tree, [k2], { name: "Local 2" }), h.env);
    expect(bad.outcomes[0]).toMatchObject({ result: "refused", code: "updates_changed" });
    const broken = await applyLocalConfig(configV(h, "Broken local"), h.env);
    expect(broken.outcomes[0]).toMatchObject({ result: "rolled_back" });
    expect(h.nameInForce()).toBe("Local");
    expect(readState(h.tree.stateDir).rolledBack).toEqual([]);
    // Through the inbox's local/ directory, as the console delivers it.
    mkdirSync(join(h.tree.inbox, "local"));
    writeFileSync(join(h.tree.inbox, "local", "change.yaml"), configV(h, "From console"));
    const r = await applyInbox(h.tree.inbox, h.env);
    expect(r.outcomes[0]).toMatchObject({ result: "committed", source: "console:change.yaml" });
    expect(h.nameInForce()).toBe("From console");
  });
});
