import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { hashBadgeUid } from "../../drivers/nfc/badges.js";
import { decodeNdefUri } from "../../drivers/nfc/ndef.js";
import { createSimNfcStation, type SimReader, SimTag } from "../../drivers/nfc/sim.js";
import { rawLegacy, rawV10, setPath } from "../config/fixtures.test-support.js";
import { ManualClock } from "../core/clock.js";
import { nfcCommand } from "./nfc.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-nfc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BEACON = "CD851CD7-8398-4A03-83C1-391A2F5CB71C";
const BADGE = "04a1b2c3d4e5f6";

let n = 0;
function configFile(content: Record<string, unknown>): string {
  const path = join(dir, `c${n++}.yaml`);
  writeFileSync(path, stringify(content));
  return path;
}

/**
 * Runs `vendd nfc` in process over a simulated station; `onPrompt` acts once the command asked for a tag
 * (the technician holds tags to the reader). No secrets are in the environment: none are needed.
 */
async function run(argv: string[], onPrompt: (reader: SimReader, clock: ManualClock) => void = () => {}) {
  const clock = new ManualClock(0);
  let stdout = "";
  let stderr = "";
  let reader: SimReader | null = null;
  const hash = await hashBadgeUid(BADGE, 1024);
  const code = await nfcCommand(
    argv,
    {
      stdout: {
        write: (t: string) => {
          stdout += t;
          if (t.startsWith("present") && reader !== null) onPrompt(reader, clock);
        },
      },
      stderr: { write: (t: string) => (stderr += t) },
      env: {},
    },
    {
      clock,
      openStation: async (config) => {
        const station = createSimNfcStation({ badges: config.nfc.badges, clock });
        reader = station.sim.plug();
        return station;
      },
    },
  );
  return { code, stdout, stderr, hash };
}

describe("vendd nfc write-tag (sim station)", () => {
  it("writes and verifies the configured check-in URI on the next tag that is not a badge", async () => {
    const hash = await hashBadgeUid(BADGE, 1024);
    const raw = rawV10();
    setPath(raw, "payment.v10.beaconId", BEACON);
    const config = configFile({ ...raw, nfc: { badges: [{ name: "alice", hash }] } });
    const blank = new SimTag("04112233445566");
    const r = await run(["write-tag", "--config", config], (reader) => {
      reader.present(new SimTag(BADGE));
      reader.remove();
      reader.present(blank);
    });
    const uri = `servicepos://pos?id=${BEACON.toLowerCase()}&source=qr`;
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `present a blank NFC tag within 60 s to write ${uri}\ntag written and verified: uid 04112233445566\n`,
    );
    expect(decodeNdefUri(blank.pages.subarray(16))).toBe(uri);
  });

  it("uses the legacy PoSUnitId, or --uri", async () => {
    const legacy = configFile(rawLegacy());
    const tag = new SimTag("04000000000002");
    const r = await run(["write-tag", "--config", legacy], (reader) => reader.present(tag));
    expect(r.code).toBe(0);
    expect(decodeNdefUri(tag.pages.subarray(16))).toBe("servicepos://pos?id=123456789012345&source=qr");
    const other = new SimTag("04000000000003");
    const uri = "servicepos://pos?id=999999999999999&source=qr";
    const r2 = await run(["write-tag", "--config", legacy, "--uri", uri], (reader) => reader.present(other));
    expect(r2.code).toBe(0);
    expect(decodeNdefUri(other.pages.subarray(16))).toBe(uri);
  });

  it("refuses when no beaconId is known", async () => {
    const r = await run(["write-tag", "--config", configFile(rawV10())]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the unit's beaconId is not known: set payment.v10.beaconId");
  });

  it("reports a locked tag and a timeout with what to do", async () => {
    const legacy = configFile(rawLegacy());
    const locked = await run(["write-tag", "--config", legacy], (reader) =>
      reader.present(new SimTag("04000000000004", 144, { readOnly: true })),
    );
    expect(locked.code).toBe(1);
    expect(locked.stderr).toBe(
      "vendd nfc: write failed (readOnly): tag is write-protected: the tag is locked: use a new tag\n",
    );
    const late = await run(["write-tag", "--config", legacy, "--timeout", "5"], (_reader, clock) =>
      clock.advance(5000),
    );
    expect(late.code).toBe(1);
    expect(late.stderr).toContain("write failed (timeout)");
  });

  it("usage errors exit 2", async () => {
    expect((await run(["format"])).code).toBe(2);
    expect((await run(["write-tag", "--timeout", "0"])).code).toBe(2);
    expect((await run(["write-tag", "--uri", "not a uri"])).code).toBe(2);
  });

  it("hashes a badge UID for the config, and the hash matches that badge only", async () => {
    const { createBadgeCheck } = await import("../../drivers/nfc/badges.js");
    const r = await run(["hash-badge", "04A1B2C3D4E5F6"]);
    expect(r.code).toBe(0);
    const hash = r.stdout.trim();
    expect(hash).toMatch(/^scrypt\$/);
    const check = createBadgeCheck([{ name: "Ann", hash }]);
    expect(await check("04a1b2c3d4e5f6")).toBe("Ann");
    expect(await check("04A1B2C3D4E5F7")).toBeNull();
    expect((await run(["hash-badge", "not-hex"])).code).toBe(2);
  });
});
