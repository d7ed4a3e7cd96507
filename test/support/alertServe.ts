/**
 * The alert tests that drive `vendd fleet serve` as a real process (issues 37, 42): start one on a config
 * (it prints the URL it serves), units that post signed requests to it over real HTTP, and a receivers'
 * config block (real SMTP with STARTTLS and login, a signature-checking webhook receiver) with secrets in a
 * 0600 secrets file. Needs the built CLI (`npm run build`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { UnitKeyPair } from "../../src/core/fleetAuth.js";
import { SMTP_PASSWORD, SMTP_USER, WEBHOOK_SECRET } from "./alertBench.js";
import { CLI } from "./cli.js";
import { signed } from "./fleet.js";
import { heartbeat } from "./fleetUnitApi.js";
import { until as waitFor } from "./wait.js";

export interface Serve {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
  /** The last 4,000 characters of its stderr. */
  stderr(): string;
}

/** Waits (real time) until `ok` is true. */
export const untilTrue = (ok: () => boolean | Promise<boolean>, ms: number, what = "the alerts") =>
  waitFor(what, async () => ((await ok()) ? true : undefined), ms);

export async function serve(cfg: string): Promise<Serve> {
  const child = spawn(process.execPath, [CLI, "fleet", "serve", "--config", cfg, "--listen", "127.0.0.1:0"], {
    env: { ...process.env, VENDD_FAULT_POINT: "", VENDD_FLEET_DB: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err = (err + d.toString()).slice(-4000);
  });
  const exited = new Promise<void>((ok) => child.once("exit", () => ok()));
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`not serving: ${err}`)), 30_000);
    child.once("exit", () => {
      clearTimeout(timer);
      fail(new Error(`fleet serve exited: ${err}`));
    });
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /serving (http:\/\/\S+)/.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
  });
  return { child, url, exited, stderr: () => err };
}

export async function unitPost(base: string, key: UnitKeyPair, path: string, body: unknown): Promise<number> {
  const r = signed(key, "POST", path, body, Date.now());
  const res = await fetch(`${base}${r.url}`, { method: "POST", headers: r.headers, body: r.payload ?? "" });
  await res.arrayBuffer();
  return res.status;
}

/** One heartbeat of `unitId` (in service, nothing unresolved, nothing pending). */
export function unitBeat(base: string, unitId: string, key: UnitKeyPair): Promise<number> {
  return unitPost(base, key, "/heartbeat", {
    ...heartbeat(unitId),
    at: Date.now(),
    unresolved: 0,
    backlog: { events: 0, oldestAt: null, lastSeq: 0 },
  });
}

/** Writes the secrets file (0600) beside the config and returns the `mail:`/`webhooks:` lines for it. */
export function receiversConfig(
  dir: string,
  smtpPort: number,
  hookUrl: string,
  indent = "  ",
): { mail: string; webhooks: string } {
  writeFileSync(
    join(dir, "secrets.yaml"),
    `alertsSmtpPassword: ${SMTP_PASSWORD}\nalertsWebhookSecret: ${WEBHOOK_SECRET}\n`,
    { mode: 0o600 },
  );
  return {
    mail: `${indent}mail: { host: 127.0.0.1, port: ${smtpPort}, username: ${SMTP_USER}, caFile: ca.pem, from: fleet@example.test, to: [ops@example.test] }`,
    webhooks: `${indent}webhooks: [{ name: ops, url: "${hookUrl}" }]`,
  };
}
