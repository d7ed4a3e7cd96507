/** The unit's own health: system clock, free disk at the journal, journal integrity. */
import { dirname } from "node:path";
import type { VenddConfig } from "../config/load.js";
import type { DoctorDeps } from "./deps.js";
import { type Check, errnoOf, messageOf } from "./run.js";

/** Earliest plausible year: a Pi without a real-time clock boots in 1970 until NTP sets the time. */
export const MIN_YEAR = 2025;
/** Free space below this at the journal's directory fails the disk check (bytes). */
export const MIN_FREE_BYTES = 50 * 1024 * 1024;

const MIB = 1024 * 1024;

/** System time plausible (year ≥ 2025) and, where timedatectl exists, NTP synchronised (reported only). */
export function clockCheck(deps: DoctorDeps): Check {
  return {
    name: "clock",
    timeoutMs: 4000,
    timeoutHint: "timedatectl did not answer: is systemd-timedated working?",
    async run() {
      const now = new Date(deps.clock.now());
      const iso = now.toISOString().replace(/\.\d{3}Z$/, "Z");
      if (now.getUTCFullYear() < MIN_YEAR) {
        return {
          status: "fail",
          detail:
            `system time is ${iso}: set the clock (timedatectl set-ntp true, and check network access ` +
            "to the NTP servers); tokens and request signatures depend on it",
        };
      }
      const ntp = await deps.ntpSynchronized();
      const sync =
        ntp === null
          ? "NTP state unknown (timedatectl not available)"
          : ntp
            ? "NTP synchronized"
            : "NTP NOT synchronized (check systemd-timesyncd: timedatectl timesync-status)";
      return { status: "ok", detail: `${iso}; ${sync}` };
    },
  };
}

/** Free space at the journal's directory (statfs), at least `MIN_FREE_BYTES`. */
export function diskCheck(config: VenddConfig, deps: DoctorDeps): Check {
  const dir = dirname(config.journal.path);
  return {
    name: "disk",
    timeoutMs: 3000,
    timeoutHint: `statfs of ${dir} hangs: is it on a network file system?`,
    async run() {
      let free: number;
      try {
        const s = await deps.statfs(dir);
        free = s.bavail * s.bsize;
      } catch (err) {
        const code = errnoOf(err);
        return {
          status: "fail",
          detail:
            code === "ENOENT"
              ? `journal directory ${dir} does not exist: create it (StateDirectory=vendd in the systemd unit) or fix journal.path`
              : code === "ENOTDIR"
                ? `journal directory ${dir} is not a directory (it, or a directory above it, is a file): fix journal.path`
                : `cannot read free space at ${dir} (${code ?? messageOf(err)}): check journal.path`,
        };
      }
      const mib = (free / MIB).toFixed(0);
      if (free < MIN_FREE_BYTES) {
        return {
          status: "fail",
          detail: `only ${mib} MiB free at ${dir} (at least ${MIN_FREE_BYTES / MIB} MiB needed): free space (journalctl --vacuum-size=50M, old files)`,
        };
      }
      return { status: "ok", detail: `${mib} MiB free at ${dir}` };
    },
  };
}

/**
 * The journal, read-only (journal/health.ts): integrity, schema, the owner sidecar's high-water mark, and
 * the sessions that need a person. A problem gives the path, the cause and the next step, like the daemon's
 * start check; sessions in conflict with the payment service fail the check. Skipped while no journal exists.
 */
export function journalCheck(config: VenddConfig, deps: DoctorDeps): Check {
  const path = config.journal.path;
  return {
    name: "journal",
    timeoutMs: 15_000,
    timeoutHint: `integrity check of ${path} is slow: is the SD card failing? (dmesg)`,
    async run() {
      const h = deps.journalHealth(path);
      if (h.kind === "fresh")
        return { status: "skip", detail: `no journal at ${path} yet (vendd creates it)` };
      if (h.kind === "problem") {
        const p = h.problem;
        return { status: "fail", detail: `${p.path}: ${p.cause} (${p.detail}). Next step: ${p.nextStep}` };
      }
      const flagged = h.flagged === 0 ? "" : `; ${h.flagged} flagged for review (vendd journal flagged)`;
      if (h.conflicts > 0) {
        return {
          status: "fail",
          detail:
            `${path}: ${h.conflicts} session(s) conflict with what the payment service did: settle them by hand ` +
            `(vendd journal unresolved)${flagged}`,
        };
      }
      const unresolved = h.unresolved === 0 ? "" : `; ${h.unresolved} unresolved (settled by recovery)`;
      return { status: "ok", detail: `${path}: integrity ok${unresolved}${flagged}` };
    },
  };
}
