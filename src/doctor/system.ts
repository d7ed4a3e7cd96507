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

/** `PRAGMA integrity_check` on a read-only connection; skipped while no journal file exists. */
export function journalCheck(config: VenddConfig, deps: DoctorDeps): Check {
  const path = config.journal.path;
  return {
    name: "journal",
    timeoutMs: 15_000,
    timeoutHint: `integrity check of ${path} is slow: is the SD card failing? (dmesg)`,
    async run() {
      if (!deps.exists(path))
        return { status: "skip", detail: `no journal at ${path} yet (vendd creates it)` };
      let rows: string[];
      try {
        rows = deps.integrityCheck(path);
      } catch (err) {
        return {
          status: "fail",
          detail: `cannot open ${path} read-only (${errnoOf(err) ?? messageOf(err)}): run doctor as the vendd user or root`,
        };
      }
      if (rows.length === 1 && rows[0] === "ok") return { status: "ok", detail: `${path}: integrity ok` };
      return {
        status: "fail",
        detail:
          `${path}: integrity check found ${rows.length} problem(s), first: ${rows[0] ?? "none reported"}; ` +
          "stop vendd, keep a copy of the file and restore the journal from a backup",
      };
    },
  };
}
