/**
 * A fleet behind a private certificate authority (issue 43; `fleet.caFile`, docs/operators.md): a real
 * `vendd fleet serve` with `tls:` and a certificate signed by a CA made here with openssl. Without
 * `caFile` the unit refuses the fleet's certificate and says how to trust it; with it, `vendd fleet
 * enroll` (the built CLI) enrols, and a running unit's fleet link delivers its heartbeat and events over
 * that HTTPS. A `caFile` that is not a certificate keeps the link off with the reason in the unit's status
 * (the unit still vends).
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { ManualClock } from "../../src/core/clock.js";
import { controlRequest } from "../../src/core/controlClient.js";
import { vendd } from "../support/cli.js";
import { type ServedFleet, serveFleet } from "../support/fleetServe.js";
import { NOWHERE, startTestDaemon, v10Unit } from "../support/inprocess.js";

let dir: string;
let fleet: ServedFleet | undefined;
let url: string;
let fleetConfig: string;
let caFile: string;

function openssl(args: string[]): void {
  execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
}

/** A CA, and a server certificate for 127.0.0.1 signed by it (not self-signed: a chain of two). */
function privateCa(at: string): { ca: string; cert: string; key: string } {
  const ca = join(at, "ca.pem");
  const caKey = join(at, "ca.key");
  const key = join(at, "server.key");
  const csr = join(at, "server.csr");
  const cert = join(at, "server.pem");
  const ext = join(at, "server.ext");
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl([
    "req",
    "-x509",
    ...ec,
    "-days",
    "1",
    "-subj",
    "/CN=vendd test fleet CA",
    "-keyout",
    caKey,
    "-out",
    ca,
  ]);
  openssl(["req", "-new", ...ec, "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", csr]);
  writeFileSync(ext, "subjectAltName=IP:127.0.0.1\n");
  openssl(
    ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-days", "1"].concat([
      "-extfile",
      ext,
      "-out",
      cert,
    ]),
  );
  chmodSync(key, 0o600);
  return { ca, cert, key };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vendd-fleet-ca-"));
  const pki = privateCa(dir);
  caFile = pki.ca;
  fleetConfig = join(dir, "fleet.yaml");
  writeFileSync(
    fleetConfig,
    `db: ${join(dir, "fleet.db")}\nlisten: 127.0.0.1:0\nlogLevel: warn\ntls: { cert: ${pki.cert}, key: ${pki.key} }\n`,
  );
  fleet = await serveFleet(fleetConfig);
  url = fleet.url;
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A unit config in its own directory, linked to the TLS fleet, with or without the CA file. */
function unitDir(name: string, ca: string | null): string {
  const at = join(dir, name);
  execFileSync("mkdir", ["-p", at]);
  v10Unit(at, name, NOWHERE);
  const caLine = ca === null ? "" : `, caFile: ${ca}`;
  appendFileSync(
    join(at, "unit.yaml"),
    `\nfleet: { url: "${url}", keyFile: ${join(at, "fleet.key")}, heartbeatSeconds: 5${caLine} }\n`,
  );
  return at;
}

interface UnitRow {
  id: string;
  status: string;
  committed_seq: number;
  last_seen_at: number | null;
}

/** The unit's row in `vendd fleet units --json`. */
async function unitRow(id: string): Promise<UnitRow | undefined> {
  const r = await vendd(["fleet", "units", "--config", fleetConfig, "--json"]);
  expect(r.stderr).toBe("");
  return (JSON.parse(r.stdout) as { units: UnitRow[] }).units.find((u) => u.id === id);
}

/** The fleet link's part of the daemon's `status` (what the console's `status` shows), over its socket. */
async function linkStatus(at: string): Promise<{ state: string; warning: string | null }> {
  const st = (await controlRequest(join(at, "control.sock"), "status")) as {
    fleet: { state: string; warning: string | null };
  };
  return st.fleet;
}

describe("fleet.caFile: a fleet with a private CA", () => {
  it("without caFile the unit refuses the fleet's certificate and says how to trust it", async () => {
    const at = unitDir("vm-noca", null);
    const r = await vendd(["fleet", "enroll", "--config", join(at, "unit.yaml")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the fleet at https:\/\/127\.0\.0\.1:\d+ is unreachable: .*certificate/);
    expect(r.stderr).toContain("set fleet.caFile to that CA's certificate (PEM)");
  });

  it("with caFile the built CLI enrols and a running unit's link heartbeats and reports over HTTPS", async () => {
    const at = unitDir("vm-ca", caFile);
    const r = await vendd(["fleet", "enroll", "--config", join(at, "unit.yaml")]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/enrolled at https:\/\/127\.0\.0\.1:\d+ as vm-ca: pending/);
    const approved = await vendd(["fleet", "approve", "vm-ca", "--config", fleetConfig]);
    expect(approved.code, approved.stderr).toBe(0);

    const loaded = loadConfig(join(at, "unit.yaml"), { secretsFile: join(at, "secrets.yaml"), env: {} });
    const u = await startTestDaemon(loaded, { clock: new ManualClock(Date.now()) });
    try {
      // The heartbeat and the start's events, seen by the fleet (virtual time steps the link's waits).
      let row = await unitRow("vm-ca");
      for (let i = 0; i < 60 && (row?.last_seen_at == null || row.committed_seq === 0); i++) {
        await u.advance(1000);
        row = await unitRow("vm-ca");
      }
      expect(row).toMatchObject({ status: "approved" });
      expect(row?.last_seen_at).not.toBeNull();
      expect(row?.committed_seq).toBeGreaterThan(0);
      expect(await linkStatus(at)).toMatchObject({ state: "ok", warning: null });
    } finally {
      await u.daemon.stop();
    }
  });

  it("a caFile that is no certificate keeps the link off and says so in the status", async () => {
    const at = unitDir("vm-badca", join(dir, "server.key"));
    const r = await vendd(["fleet", "enroll", "--config", join(at, "unit.yaml")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("holds no PEM certificate");
    const loaded = loadConfig(join(at, "unit.yaml"), { secretsFile: join(at, "secrets.yaml"), env: {} });
    const u = await startTestDaemon(loaded, { clock: new ManualClock(Date.now()) });
    try {
      const fleetLink = await linkStatus(at);
      expect(fleetLink.state).toBe("disabled");
      expect(fleetLink.warning).toContain("holds no PEM certificate");
      expect(u.daemon.status().reasons.map((r) => r.code)).not.toContain("fleet");
    } finally {
      await u.daemon.stop();
    }
  });
});
