/**
 * Issue 41's end-to-end world: real unit daemons (`vendd run`, the built CLI) on one payment-service emulator,
 * each with its own VMC simulator on a PTY (MDB adapter), enrolled to a real fleet (`vendd fleet serve`).
 * The test plays systemd for each unit: `vendd-bundle.path` (a bundle renamed into the inbox starts
 * `vendd bundle apply --inbox`, as the path unit does) and `vendd.service`'s restart (the applier's
 * restart command stops the daemon; the test starts it again, as `Restart=always` would).
 *
 * The units run the older payment interface, whose point of sale and beacon are all identity keys
 * (src/config/identity.ts): one fleet-wide config bundle then serves both units on one emulator.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { startVmcSimulator, type VmcSimulator } from "../../drivers/vmc/simulator/index.js";
import { selectionVend, type VendRecord } from "../../src/chaos/actors.js";
import { Unit, type World } from "../../src/chaos/rig.js";
import { IDENTITY_KEYS } from "../../src/config/identity.js";
import { generateUnitKey } from "../../src/core/fleetAuth.js";
import { seededRandom } from "../../src/core/random.js";
import type { Emulator } from "../../src/emulator/index.js";
import type { TestKey } from "../../src/update/update.test-support.js";
import { CLI, type CliResult, vendd } from "./cli.js";
import { signed } from "./fleet.js";
import { enrol } from "./fleetE2e.js";
import { heartbeat } from "./fleetUnitApi.js";

/**
 * The restart command the fleet-wide bundle names: stops the unit's daemon (its pid in the file the test's
 * supervisor keeps, `$E2E_PIDFILE`) and waits until it is gone; the supervisor starts it again.
 */
export const TEST_RESTART_COMMAND = [
  "sh",
  "-c",
  'p=$(cat "$E2E_PIDFILE"); kill -TERM "$p" 2>/dev/null; while kill -0 "$p" 2>/dev/null; do sleep 0.05; done',
];

/** A raw config without its identity keys: what a fleet-wide bundle carries. */
export function withoutIdentity(raw: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(raw);
  for (const key of IDENTITY_KEYS) {
    const parts = key.split(".");
    let cur: unknown = copy;
    for (const p of parts.slice(0, -1))
      cur = typeof cur === "object" && cur !== null ? (cur as Record<string, unknown>)[p] : undefined;
    if (typeof cur === "object" && cur !== null) delete (cur as Record<string, unknown>)[parts.at(-1) ?? ""];
  }
  return copy;
}

export interface FleetRef {
  url: string;
  db: string;
}

/** One real unit daemon enrolled to the fleet, with its own VMC simulator, inbox watcher and restarts. */
export class FleetDaemon {
  readonly unit: Unit;
  readonly inbox: string;
  readonly stateDir: string;
  /** Every applier run (the path unit's starts), in order. */
  readonly applies: CliResult[] = [];
  private stopping = false;
  private applier: ChildProcess | null = null;
  private watcher: NodeJS.Timeout | null = null;
  private readonly random: () => number;

  private constructor(
    readonly id: string,
    readonly world: World,
    readonly sim: VmcSimulator,
    readonly fullConfig: Record<string, unknown>,
    seed: number,
  ) {
    this.unit = Unit.create(world, { driver: "legacy", flow: "selection" });
    this.inbox = join(this.unit.files.dir, "inbox");
    this.stateDir = join(this.unit.files.dir, "updates");
    this.random = seededRandom(seed);
  }

  get configPath(): string {
    return this.unit.files.configPath;
  }

  /**
   * A unit `id` (its point of sale `pos-<id>`, beacon `beacon`) on `emu`, with a fleet link to `fleet`
   * (heartbeat 5 s, bundle jitter under 2 s), trusting `trust`'s bundles for fleet `fleet-a`; enrolled and
   * approved, its config split into identity.yaml and the rest. Not started.
   */
  static async create(
    emu: Emulator,
    id: string,
    beacon: string,
    fleet: FleetRef,
    trust: TestKey,
    seed: number,
  ): Promise<FleetDaemon> {
    const sim = await startVmcSimulator({ ackRate: 100 });
    const world: World = {
      emu,
      sim,
      units: [],
      async close() {
        for (const u of this.units) await u.dispose();
        await sim.close();
      },
    };
    // The config is set after the unit's files exist (Unit.create writes them).
    const d = new FleetDaemon(id, world, sim, {}, seed);
    const files = d.unit.files;
    const raw = JSON.parse(readFileSync(files.configPath, "utf8")) as Record<string, unknown>;
    const keyFile = join(files.dir, "fleet.key");
    const key = generateUnitKey();
    writeFileSync(keyFile, key.privatePem, { mode: 0o600 });
    for (const dir of [d.inbox, d.stateDir, join(files.dir, "releases")]) mkdirSync(dir, { recursive: true });
    const legacy = (raw.payment as { legacy: Record<string, unknown> }).legacy;
    Object.assign(raw, {
      unit: { id, name: `Unit ${id}` },
      payment: { driver: "legacy", legacy: { ...legacy, posId: `pos-${id}`, posUnitId: beacon } },
      fleet: { url: fleet.url, keyFile, heartbeatSeconds: 5, bundleJitterSeconds: 2 },
      updates: {
        publicKeys: [trust.line],
        fleet: "fleet-a",
        stateDir: d.stateDir,
        releaseRoot: join(files.dir, "releases"),
        inbox: d.inbox,
        restartCommand: TEST_RESTART_COMMAND,
        health: { holdMs: 1000, timeoutMs: 30_000, pollMs: 100 },
      },
    });
    Object.assign(d.fullConfig, raw);
    writeFileSync(files.configPath, `${JSON.stringify(raw, null, 2)}\n`, { mode: 0o600 });
    const split = await vendd(["config", "split", files.configPath]);
    if (split.code !== 0) throw new Error(`vendd config split: ${split.stderr}`);
    await enrol(fleet.url, fleet.db, id, key);
    return d;
  }

  /** The unit's beacon (the older interface's `posUnitId`). */
  get beacon(): string {
    const legacy = (this.fullConfig.payment as { legacy: { posUnitId: string } }).legacy;
    return legacy.posUnitId;
  }

  /** Starts the daemon (in service), the inbox watcher and the restarts after the applier's stops. */
  async start(): Promise<void> {
    this.launch();
    await this.unit.whenInService();
    this.watcher = setInterval(() => this.watchInbox(), 100);
  }

  /** The file the restart command reads the daemon's pid from. */
  get pidFile(): string {
    return join(this.unit.files.dir, "daemon.pid");
  }

  /**
   * Launches the daemon and keeps it running as `vendd.service`'s `Restart=always` does: a daemon that ends
   * while the unit is not stopping is launched again (whether or not it came into service).
   */
  private launch(): void {
    const d = this.unit.launch({ readyTimeoutMs: 30_000 });
    writeFileSync(this.pidFile, `${d.daemonPid ?? 0}\n`);
    void d.whenExited().then(() => {
      if (!this.stopping && this.unit.daemon === d) this.launch();
    });
  }

  /** `vendd-bundle.path`: a complete file in the inbox (no dot name; PathExistsGlob=inbox/*.*) starts the applier. */
  private watchInbox(): void {
    if (this.applier !== null || this.stopping) return;
    const waiting = readdirSync(this.inbox).filter(
      (n) => !n.startsWith(".") && n.includes(".") && statSync(join(this.inbox, n)).isFile(),
    );
    if (waiting.length === 0) return;
    const child = spawn(
      process.execPath,
      [CLI, "bundle", "apply", "--config", this.configPath, "--inbox", this.inbox, "--json"],
      {
        env: { ...process.env, E2E_PIDFILE: this.pidFile },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    this.applier = child;
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr?.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    child.once("close", (code) => {
      this.applies.push({ code, stdout, stderr });
      this.applier = null;
    });
  }

  /** One selection-first sale on this unit's VMC, paid in the app on its beacon. */
  sell(item: number, price: number): Promise<VendRecord> {
    return selectionVend(
      {
        emu: this.world.emu,
        sim: this.sim,
        beaconId: this.beacon,
        phone: "+4520031801", // a user the emulator knows (src/emulator/users.ts)
        payWithinMs: 6000,
        decideWithinMs: 8000,
        random: this.random,
      },
      item,
      price,
      1,
    );
  }

  /** A sale that must succeed (the daemon's log tail when not). */
  async expectSale(item: number, price: number): Promise<void> {
    const r = await this.sell(item, price);
    expect(r.outcome, `${this.id}: ${this.unit.daemon?.tail(4000) ?? "no daemon"}`).toBe("success");
  }

  /** `vendd config print --origin --json`: each key with its value and the layer it comes from. */
  async origins(): Promise<Map<string, { value: unknown; origin: string }>> {
    const r = await vendd(["config", "print", this.configPath, "--origin", "--json"]);
    if (r.code !== 0) throw new Error(`vendd config print: ${r.stderr}`);
    const rows = JSON.parse(r.stdout) as { key: string; value: unknown; origin: string }[];
    return new Map(rows.map((row) => [row.key, { value: row.value, origin: row.origin }]));
  }

  /** Stops the watcher, waits for an applier running, stops the daemon and the simulator, removes the files. */
  async close(): Promise<void> {
    this.stopping = true;
    if (this.watcher !== null) clearInterval(this.watcher);
    const a = this.applier;
    if (a !== null && a.exitCode === null) await new Promise((r) => a.once("close", r));
    await this.unit.daemon?.stop();
    await this.world.close();
  }
}

/** A simulated unit on the fleet's signed unit API over HTTP (no daemon): heartbeats, fetches, steps. */
export class HttpSimUnit {
  readonly key = generateUnitKey();
  constructor(
    readonly id: string,
    readonly url: string,
  ) {}

  private async call(method: "GET" | "POST", path: string, body?: unknown) {
    const r = signed(this.key, method, path, body, Date.now());
    const res = await fetch(`${this.url}${r.url}`, {
      method,
      headers: r.headers,
      ...(r.payload === undefined ? {} : { body: r.payload }),
    });
    const text = await res.text();
    return { status: res.status, text };
  }

  /** One heartbeat; the bundle hint (ETag) of its answer. */
  async hint(): Promise<string | null> {
    const r = await this.call("POST", "/heartbeat", {
      ...heartbeat(this.id),
      at: Date.now(),
      backlog: { events: 0, oldestAt: null, lastSeq: 0 },
      unresolved: 0,
    });
    if (r.status !== 200) throw new Error(`${this.id} heartbeat: HTTP ${r.status} ${r.text}`);
    return (JSON.parse(r.text) as { bundleEtag: string | null }).bundleEtag;
  }

  /** `GET /bundle`'s status (200: offered, 404: nothing for this unit now). */
  async fetchStatus(): Promise<number> {
    return (await this.call("GET", "/bundle")).status;
  }

  /** Reports a step of the bundle `sha256`. */
  async step(sha256: string, step: string, reason = ""): Promise<void> {
    const r = await this.call("POST", "/steps", { unitId: this.id, sha256, step, reason, at: Date.now() });
    if (r.status !== 200) throw new Error(`${this.id} step ${step}: HTTP ${r.status} ${r.text}`);
  }
}
