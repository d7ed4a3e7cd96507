import type { CheckinDisplay } from "../../drivers/display/display.js";
import type { Clock } from "../core/clock.js";
import type { Notifier } from "../core/sdnotify.js";
import {
  composeStatus,
  type StatusParts,
  type StatusReason,
  screenReason,
  statusLine,
  type UnitStatus,
} from "./status.js";

export interface ServiceStateDeps {
  unitId: string;
  clock: Clock;
  notifier: Notifier;
  display: CheckinDisplay;
}

/**
 * Holds why the unit is out of service and says it everywhere it must be said: the screen (for the
 * daemon's own reasons: reaching the service, a journal that cannot be written), the systemd STATUS line
 * on each change, and status listeners. Sends READY once: when the unit goes in service or first shows why
 * it cannot (or when the daemon's grace time is up), so that systemd never times the start out and
 * restarts a unit that is waiting for its service. The watchdog starts with READY.
 */
export class ServiceState {
  private readonly parts: StatusParts = {
    connect: null,
    failure: null,
    doorOpen: false,
    serviceMode: false,
    stopping: false,
  };
  private readonly listeners = new Set<(s: UnitStatus) => void>();
  private readySent = false;
  private lastLine = "";
  private stopWatchdog: () => void = () => {};

  constructor(private readonly deps: ServiceStateDeps) {}

  status(): UnitStatus {
    return composeStatus(this.parts);
  }

  onStatus(listener: (s: UnitStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Reaching the service: a setback (or `starting`), or null once in service. Members only, the engine
   * keeps the screen (members are served): the reason is not shown there.
   */
  setConnect(reason: StatusReason | null): void {
    this.parts.connect = reason;
    if (reason !== null && this.parts.membersOnly !== true) this.show(reason);
    this.publish();
    if (reason?.code !== "starting") this.ready();
  }

  /** Members only (issue 31): the VMC serves members' plan vends while the service is not reached. */
  setMembersOnly(on: boolean): void {
    this.parts.membersOnly = on;
    this.publish();
    if (on) this.ready();
  }

  /** An engine failure (healing or not), or null once healed. */
  setFailure(reason: StatusReason | null): void {
    this.parts.failure = reason;
    if (reason !== null) this.show(reason);
    this.publish();
  }

  /** Out of service by request (the engine shows those itself). */
  setRequested(doorOpen: boolean, serviceMode: boolean): void {
    this.parts.doorOpen = doorOpen;
    this.parts.serviceMode = serviceMode;
    this.publish();
  }

  /** A DEX audit read runs (true) or ended (false): out of service for it (issue 42). */
  setDexRead(on: boolean): void {
    this.parts.dexRead = on;
    this.publish();
  }

  setStopping(): void {
    this.parts.stopping = true;
    this.publish();
  }

  /** READY=1 with the current STATUS (once), and the watchdog from then on. */
  ready(): void {
    if (this.readySent) return;
    this.readySent = true;
    this.lastLine = this.line();
    this.deps.notifier.ready(this.lastLine);
    this.stopWatchdog = this.deps.notifier.startWatchdog();
  }

  close(): void {
    this.stopWatchdog();
  }

  private line(): string {
    return statusLine(this.deps.unitId, this.status(), this.deps.clock.now());
  }

  private show(reason: StatusReason): void {
    this.deps.display.show({ kind: "outOfService", reason: screenReason(reason) });
  }

  private publish(): void {
    const line = this.line();
    if (this.readySent && line !== this.lastLine) this.deps.notifier.status(line);
    this.lastLine = line;
    const s = this.status();
    for (const l of this.listeners) l(s);
  }
}
