/** `vendd fleet enroll` through the built CLI, against the in-test fleet double. */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fingerprint, loadUnitKey } from "../../src/core/fleetAuth.js";
import { UNREACHABLE_V10_YAML, vendd } from "../support/cli.js";
import { FakeFleet } from "../support/fakeFleet.js";

let dir: string;
let fleet: FakeFleet;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "vendd-enroll-"));
  fleet = await FakeFleet.start({ requireApproval: true });
});
afterEach(async () => {
  await fleet.close();
  rmSync(dir, { recursive: true, force: true });
});

function config(unitId: string, url: string | null): string {
  const path = join(dir, `${unitId}.yaml`);
  writeFileSync(
    path,
    [
      `unit: { id: ${unitId}, name: Lobby machine }`,
      `journal: { path: ${join(dir, "j.db")} }`,
      ...UNREACHABLE_V10_YAML,
      ...(url === null ? [] : [`fleet: { url: "${url}", keyFile: ${join(dir, `${unitId}.key`)} }`]),
    ].join("\n"),
  );
  return path;
}

describe("vendd fleet enroll", () => {
  it("makes a 0600 key once, prints key and fingerprint, and never overwrites it", async () => {
    const key = join(dir, "keys", "fleet.key");
    const r = await vendd(["fleet", "enroll", "--key", key, "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { publicKey: string; fingerprint: string; created: boolean };
    expect(out.created).toBe(true);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    const pem = readFileSync(key, "utf8");
    expect(loadUnitKey(pem).publicKey).toBe(out.publicKey);
    expect(out.fingerprint).toBe(fingerprint(out.publicKey));
    const again = await vendd(["fleet", "enroll", "--key", key]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`using the unit key ${key}`);
    expect(again.stdout).toContain(`fingerprint: ${out.fingerprint}`);
    expect(readFileSync(key, "utf8")).toBe(pem);
  });

  it("refuses a key file that is not an Ed25519 key, leaving it alone", async () => {
    const key = join(dir, "bad.key");
    writeFileSync(key, "not a key\n");
    const r = await vendd(["fleet", "enroll", "--key", key]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not a PEM private key");
    expect(readFileSync(key, "utf8")).toBe("not a key\n");
  });

  it("enrols with the config's fleet URL: pending, then approved; another key for the same id is refused (409)", async () => {
    const file = config("vm-e1", fleet.url);
    const r = await vendd(["fleet", "enroll", "--config", file, "--label", "Lobby, 2nd floor"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/enrolled at .* as vm-e1: pending/);
    expect(fleet.units.get("vm-e1")?.label).toBe("Lobby, 2nd floor");
    fleet.approve("vm-e1");
    const ok = await vendd(["fleet", "enroll", "--config", file, "--json"]);
    expect(JSON.parse(ok.stdout)).toMatchObject({ unitId: "vm-e1", status: "approved", created: false });
    const other = await vendd([
      "fleet",
      "enroll",
      "--config",
      file,
      "--key",
      join(dir, "other.key"),
      "--url",
      fleet.url,
    ]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("unit id vm-e1 is already enrolled with another key");
    expect(fleet.refusals).toEqual(["idTaken"]);
  });

  it("says the fleet is unreachable", async () => {
    await fleet.close();
    fleet = await FakeFleet.start();
    const url = fleet.url;
    await fleet.close();
    fleet = await FakeFleet.start();
    const r = await vendd(["fleet", "enroll", "--config", config("vm-e2", url)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the fleet at ${url} is unreachable`);
  });
});
