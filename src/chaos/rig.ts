import { startVmcSimulator, type VmcSimulator } from "../../drivers/vmc/simulator/index.js";
import { type Emulator, startEmulator } from "../emulator/index.js";
import type { LedgerEntry } from "../emulator/types.js";
import { DaemonProcess, type DaemonSpawnOptions } from "./daemonProcess.js";
import { unresolvedCount } from "./journalView.js";
import { type UnitFiles, type UnitShape, writeUnitFiles } from "./unitFiles.js";

/** The parts of the unit under test that outlive daemon restarts: the service and the machine. */
export interface World {
  emu: Emulator;
  sim: VmcSimulator;
  /** Units created in this world; `close()` kills their daemons and removes their files. */
  readonly units: Unit[];
  close(): Promise<void>;
}

/**
 * Starts the payment-service emulator in-process (poll delay 50 ms: a test affordance; the older
 * interface still polls each second by the seed's rule) and the VMC simulator on a real PTY.
 * @param pollDelayMs the emulator's `pollDelayInMs`, ms (min 10).
 * @param ackRate the VMC's polls (`r,ACK`) per second; each adapter command waits for one (default 100).
 */
export async function startWorld(pollDelayMs = 50, ackRate = 100): Promise<World> {
  const emu = await startEmulator({ pollDelayMs });
  let sim: VmcSimulator;
  try {
    sim = await startVmcSimulator({ ackRate });
  } catch (err) {
    await emu.close();
    throw err;
  }
  const units: Unit[] = [];
  return {
    emu,
    sim,
    units,
    async close() {
      for (const u of units) await u.dispose();
      await sim.close();
      await emu.close();
    },
  };
}

/** What a launch may add: environment (fault point), a command prefix (strace, fiu-run), a ready timeout. */
export type LaunchOptions = Pick<DaemonSpawnOptions, "env" | "prefix" | "readyTimeoutMs" | "command">;

/**
 * One unit under test in a world: its files, the current `vendd run` child, and the marks (ledger
 * sequence, simulator approvals) from which its own traffic counts.
 */
export class Unit {
  daemon: DaemonProcess | null = null;
  /** Daemons started so far. */
  starts = 0;
  /** Children that died by SIGKILL (ours or an armed fault point). */
  kills = 0;
  /** Merged into every launch (also the restarts a scenario makes): another program, a longer ready wait. */
  launchDefaults: LaunchOptions = {};
  private inServiceNow = false;
  private readiness: Promise<void> = Promise.resolve();
  readonly ledgerMark: number;
  readonly approvalMark: number;
  readonly violationMark: number;

  private constructor(
    readonly world: World,
    readonly shape: UnitShape,
    readonly files: UnitFiles,
  ) {
    this.ledgerMark = world.emu.ledger().at(-1)?.seq ?? 0;
    this.approvalMark = world.sim.approvals.length;
    this.violationMark = world.sim.violations.length;
  }

  static create(world: World, shape: UnitShape): Unit {
    const unit = new Unit(world, shape, writeUnitFiles(world.emu.info, shape, world.sim.devicePath));
    world.units.push(unit);
    return unit;
  }

  /** This unit's money movements at the service. */
  ledger(): LedgerEntry[] {
    return this.world.emu.ledger().filter((e) => e.seq > this.ledgerMark);
  }

  /**
   * Spawns `vendd run` (recovery runs first) without waiting; `inService` turns true when it logs
   * "unit in service". A child killed before that is simply never in service.
   */
  launch(opts: LaunchOptions = {}): DaemonProcess {
    if (this.running) throw new Error("daemon already running");
    const merged: LaunchOptions = {
      ...this.launchDefaults,
      ...opts,
      env: { ...this.launchDefaults.env, ...opts.env },
    };
    const d = DaemonProcess.spawn({
      configPath: this.files.configPath,
      secretsPath: this.files.secretsPath,
      ...merged,
    });
    this.daemon = d;
    this.inServiceNow = false;
    this.starts++;
    this.readiness = d.ready(merged.readyTimeoutMs).then(() => {
      if (this.daemon === d) this.inServiceNow = true;
    });
    this.readiness.catch(() => undefined);
    return d;
  }

  /** Starts `vendd run` and waits until it is in service (rejects with its log tail otherwise). */
  async start(opts: LaunchOptions = {}): Promise<DaemonProcess> {
    const d = this.launch(opts);
    await this.readiness;
    return d;
  }

  /** Waits until the current child is in service. */
  async whenInService(): Promise<void> {
    await this.readiness;
  }

  /** Check-in first on the older interface: an idle payment is kept initiated, its session open. */
  get keepsIdlePayment(): boolean {
    return this.shape.driver === "legacy" && this.shape.flow === "checkin";
  }

  /** True once the current child logged "unit in service" and until it is stopped or crashes. */
  get inService(): boolean {
    return this.inServiceNow && this.running;
  }

  /** True while the current child runs. */
  get running(): boolean {
    return this.daemon !== null && this.daemon.exited === null;
  }

  /** SIGKILL the current child (a crash) and count it. */
  async crash(): Promise<void> {
    const d = this.daemon;
    this.inServiceNow = false;
    if (d === null || d.exited !== null) return;
    const exit = await d.crash();
    if (exit.signal === "SIGKILL") this.kills++;
  }

  /** Waits for a child that kills itself (armed fault point); true when it died by SIGKILL in time. */
  async diedBySigkill(timeoutMs: number): Promise<boolean> {
    const d = this.daemon;
    if (d === null) return false;
    const exit = await Promise.race([
      d.whenExited(),
      new Promise<null>((r) => setTimeout(() => r(null), timeoutMs)),
    ]);
    if (exit?.signal === "SIGKILL") {
      this.kills++;
      return true;
    }
    return false;
  }

  /**
   * Lets recovery finish and stops the unit cleanly: (re)starts it if needed, waits (bounded) until the
   * journal shows no unresolved session, then SIGTERM. Returns the sessions still unresolved.
   */
  async settleAndStop(roundMs = 5000, rounds = 3): Promise<number> {
    let left = 0;
    for (let round = 0; round < rounds; round++) {
      if (this.running) await this.whenInService();
      else await this.start();
      const deadline = Date.now() + roundMs;
      const idleByDesign = this.keepsIdlePayment;
      left = unresolvedCount(this.files.journalPath, idleByDesign);
      while (left > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        left = unresolvedCount(this.files.journalPath, idleByDesign);
      }
      this.inServiceNow = false;
      await this.daemon?.stop();
      // Still unresolved (the sweeper runs only every 60 s): a restart runs recovery again.
      if (left === 0) return 0;
    }
    return left;
  }

  /** Kills any child left and removes the unit's files. */
  async dispose(keepFiles = false): Promise<void> {
    await this.daemon?.crash();
    if (!keepFiles) this.files.remove();
  }
}
