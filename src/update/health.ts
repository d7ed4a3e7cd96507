/**
 * The health gate after a swap: the restarted daemon must report READY, then stay healthy (VMC link up,
 * payment service reachable, no journal error) for `holdMs`, all within `timeoutMs` of the restart. The
 * daemon is read through a `HealthProbe`; production asks its control socket (`status`), tests inject one.
 */
import { execFile } from "node:child_process";
import { connect } from "node:net";
import type { Clock } from "../core/clock.js";
import type { UpdateFaultPoints } from "../core/faults.js";

/** What the gate needs from the daemon's status. */
export interface HealthSample {
  ready: boolean;
  vmcLinkUp: boolean;
  serviceReachable: boolean;
  /** Journal errors since the daemon started. */
  journalErrors: number;
  /** Why the daemon says it is out of service, when it says so (its status reasons). */
  outOfService?: string;
}

export interface HealthProbe {
  /** The daemon's health now; throws when it cannot be asked (not running, no socket). */
  sample(): Promise<HealthSample>;
}

export interface GateOptions {
  holdMs: number;
  timeoutMs: number;
  pollMs: number;
}

export type GateResult = { healthy: true } | { healthy: false; reason: string };

function describe(s: HealthSample): string {
  const bad: string[] = [];
  if (!s.ready) bad.push("not ready");
  if (!s.vmcLinkUp) bad.push("VMC link down");
  if (!s.serviceReachable) bad.push("payment service unreachable");
  if (s.outOfService !== undefined) bad.push(`out of service (${s.outOfService})`);
  return bad.join(", ");
}

/** A countdown line at least this often while the gate waits (and at each change between healthy and not). */
export const GATE_PROGRESS_MS = 5_000;

const secs = (ms: number) => `${Math.max(0, Math.ceil(ms / 1000))} s`;

/**
 * Polls `probe` until the daemon has been ready and healthy for `holdMs` (healthy), a journal error shows
 * (unhealthy at once), or `timeoutMs` passes (unhealthy, with the last thing that was wrong). `progress`
 * gets a countdown (issue 43): what the gate waits for at the start, then, at each change between healthy and
 * not and at least every GATE_PROGRESS_MS, the time left and what it waits for.
 */
export async function healthGate(
  probe: HealthProbe,
  opts: GateOptions,
  clock: Clock,
  faults: UpdateFaultPoints,
  progress: (line: string) => void = () => {},
): Promise<GateResult> {
  const deadline = clock.now() + opts.timeoutMs;
  let healthySince: number | null = null;
  let last = "no answer yet";
  progress(
    `health gate: the daemon has ${secs(opts.timeoutMs)} to be ready and then healthy for ${secs(opts.holdMs)}`,
  );
  let told: { at: number; healthy: boolean } | null = null;
  const tell = (now: number) => {
    const healthy = healthySince !== null;
    if (told !== null && told.healthy === healthy && now - told.at < GATE_PROGRESS_MS) return;
    told = { at: now, healthy };
    progress(
      healthySince === null
        ? `health gate: ${secs(deadline - now)} left; waiting: ${last}`
        : `health gate: healthy; committed in ${secs(opts.holdMs - (now - healthySince))} unless it fails (${secs(deadline - now)} left)`,
    );
  };
  for (;;) {
    let sample: HealthSample | null = null;
    try {
      sample = await probe.sample();
    } catch (err) {
      last = `status unavailable (${err instanceof Error ? err.message : "error"})`;
    }
    faults.hit("update.health");
    const now = clock.now();
    if (sample !== null) {
      if (sample.journalErrors > 0) {
        return { healthy: false, reason: `the journal reported ${sample.journalErrors} error(s)` };
      }
      const problem = describe(sample);
      if (problem === "") {
        healthySince ??= now;
        if (now - healthySince >= opts.holdMs) return { healthy: true };
      } else {
        healthySince = null;
        last = problem;
      }
    } else {
      healthySince = null;
    }
    if (now >= deadline) {
      progress(`health gate: time is up (${last})`);
      return {
        healthy: false,
        reason: `not healthy for ${opts.holdMs} ms within ${opts.timeoutMs} ms of the restart (${last})`,
      };
    }
    tell(now);
    await clock.sleep(Math.min(opts.pollMs, Math.max(0, deadline - now)));
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Reads the gate's fields from a control-socket `status` result. The daemon's status
 * (src/core/controlStatus.ts `ControlStatus` on the console branch) reports `links: { vmc, payment, journal }` as `up|down|unknown`:
 * an answer at all means the daemon is up; ready = the journal link is up; VMC and payment links up and
 * `inService` not false are the health; a journal link `down` is a journal error. A `health: { ready, vmcLinkUp, serviceReachable,
 * journalErrors }` section, when present, is taken as it is.
 */
export function healthFromStatus(result: unknown): HealthSample {
  const r = isObj(result) ? result : {};
  const h = r.health;
  if (
    isObj(h) &&
    typeof h.ready === "boolean" &&
    typeof h.vmcLinkUp === "boolean" &&
    typeof h.serviceReachable === "boolean" &&
    typeof h.journalErrors === "number"
  ) {
    return {
      ready: h.ready,
      vmcLinkUp: h.vmcLinkUp,
      serviceReachable: h.serviceReachable,
      journalErrors: h.journalErrors,
    };
  }
  const links = r.links;
  if (isObj(links)) {
    const sample: HealthSample = {
      ready: links.journal === "up",
      vmcLinkUp: links.vmc === "up",
      serviceReachable: links.payment === "up",
      journalErrors: links.journal === "down" ? 1 : 0,
    };
    if (r.inService === false) {
      const reasons = Array.isArray(r.reasons) ? r.reasons : [];
      const codes = reasons.map((x) => (isObj(x) && typeof x.code === "string" ? x.code : "?")).slice(0, 5);
      sample.outOfService = codes.length > 0 ? codes.join(", ") : "no reason given";
    }
    return sample;
  }
  throw new Error("the status answer has neither links nor a health section");
}

/**
 * One `status` request over the daemon's control socket (newline-delimited JSON, `{"v":1,"id":N,"cmd":
 * "status"}` → `{"v":1,"id":N,"ok":true,"result":{...}}`).
 */
export function controlSocketProbe(socketPath: string, timeoutMs = 2000): HealthProbe {
  let nextId = 1;
  return {
    sample() {
      const id = nextId++;
      return new Promise<HealthSample>((resolve, reject) => {
        const sock = connect(socketPath);
        let buf = "";
        const done = (err: Error | null, value?: HealthSample) => {
          clearTimeout(timer);
          sock.destroy();
          if (err !== null) reject(err);
          else if (value !== undefined) resolve(value);
        };
        const timer = setTimeout(() => done(new Error("no answer in time")), timeoutMs);
        sock.setEncoding("utf8");
        sock.on("connect", () => sock.write(`${JSON.stringify({ v: 1, id, cmd: "status" })}\n`));
        sock.on("error", (err: NodeJS.ErrnoException) => done(new Error(err.code ?? "socket error")));
        sock.on("data", (chunk: string) => {
          buf += chunk;
          if (buf.length > 1_048_576) return done(new Error("answer too long"));
          const nl = buf.indexOf("\n");
          if (nl < 0) return;
          try {
            const answer: unknown = JSON.parse(buf.slice(0, nl));
            if (!isObj(answer) || answer.id !== id || answer.ok !== true) {
              return done(new Error("the status request was refused"));
            }
            done(null, healthFromStatus(answer.result));
          } catch (err) {
            done(err instanceof Error ? err : new Error("bad answer"));
          }
        });
        sock.on("end", () => done(new Error("closed without an answer")));
      });
    },
  };
}

/** Restarts the daemon with `argv` (no shell); rejects when it exits non-zero or takes over `timeoutMs`. */
export function commandRestarter(argv: readonly string[], timeoutMs = 120_000): () => Promise<void> {
  return () =>
    new Promise((resolve, reject) => {
      const [cmd, ...args] = argv;
      if (cmd === undefined) {
        reject(new Error("no restart command"));
        return;
      }
      execFile(cmd, args, { timeout: timeoutMs }, (err) => {
        if (err === null) resolve();
        else reject(new Error(`restart command failed (${err.code ?? err.signal ?? "error"})`));
      });
    });
}
