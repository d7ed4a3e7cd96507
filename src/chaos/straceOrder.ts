import { spawnSync } from "node:child_process";

/** True when Debian's `strace` can be run (the ordering proof needs it; CI installs it). */
export function straceAvailable(): boolean {
  const r = spawnSync("strace", ["-V"], { stdio: "ignore" });
  return r.error === undefined && r.status === 0;
}

/**
 * The strace prefix of the ordering proof (reliability.md §7 rung 1): follow threads, annotate every fd with
 * its path or socket endpoints (`-yy`, which does the openat/connect fd mapping for us, fd reuse included),
 * and print whole writes (`-s 5000`: request heads, and WAL frames with the intent rows in them).
 */
export function straceArgs(outFile: string): string[] {
  return [
    "strace",
    "-f",
    "-qq",
    "-yy",
    "-s",
    "5000",
    "-e",
    "trace=openat,fsync,fdatasync,connect,write,writev,sendto,sendmsg,pwrite64",
    "-o",
    outFile,
  ];
}

/** One payment mutation request as it left the process, and the WAL syncs that completed before it. */
export interface MutationWrite {
  /** e.g. `POST /v10/payments/…/capture`. */
  request: string;
  /** The syscall that carried the request head: `writev`, `write`, `sendto` or `sendmsg`. */
  syscall: string;
  /** The socket, as strace names it (`TCP:[local->remote]`). */
  socket: string;
  /** WAL fsyncs completed since the previous mutation request left (0 = not journaled first). */
  syncsBefore: number;
  /** The journal intent's idempotency key this request was matched to (see `analyseTrace`), or null. */
  key: string | null;
  /**
   * True when the WAL frame holding the intent row with this key was written AND a WAL fsync completed
   * after that write and before the request's first byte left; null when no intent was matched.
   */
  keyDurableFirst: boolean | null;
}

export interface OrderReport {
  mutations: MutationWrite[];
  /** Completed fsync/fdatasync calls on the journal's WAL, in the whole trace. */
  walSyncs: number;
}

const MUTATION =
  /"(POST (?:\/v10\/payments(?:\/[^/ ]+\/(?:capture|cancel))?|\/API\/V\d\d\/Reservation(?:Start|Capture|Cancel)|\/API\/V\d\d\/Payment(?:Start|Cancel|Refund))) HTTP\/1\.1/;
const CALL = /^(\d+)\s+(fsync|fdatasync|write|writev|sendto|sendmsg|pwrite64)\((\d+)<([^>]*)>/;
/** Finds the journal intent a request line belongs to: its stored idempotency key, or null. */
export type IntentResolver = (request: string, line: string) => string | null;
const RESUMED = /^(\d+)\s+<\.\.\. (fsync|fdatasync) resumed>/;

/**
 * Reads an `strace -f -yy` trace of the daemon and lists every payment mutation request written to a
 * socket with the number of journal WAL syncs that completed between the previous mutation and this one.
 * An fsync counts when it returns (a `<unfinished ...>` call counts at its `resumed` line). With `intentOf`,
 * each request is matched to its journal intent, and the WAL frame carrying that intent's key must have
 * been written and synced before the request's first byte.
 * @param walPath the journal's WAL file (`<journal>-wal`).
 */
export function analyseTrace(trace: string, walPath: string, intentOf?: IntentResolver): OrderReport {
  const mutations: MutationWrite[] = [];
  const pendingSync = new Map<string, boolean>();
  /** Line numbers of completed WAL syncs, and of WAL frame writes with their text. */
  const syncAt: number[] = [];
  const walWrites: { at: number; text: string }[] = [];
  let syncs = 0;
  const lines = trace.split("\n");
  for (const [at, line] of lines.entries()) {
    const resumed = RESUMED.exec(line);
    if (resumed) {
      const pid = resumed[1] ?? "";
      if (pendingSync.get(pid) === true && !/= -1/.test(line)) {
        syncs++;
        syncAt.push(at);
      }
      pendingSync.delete(pid);
      continue;
    }
    const call = CALL.exec(line);
    if (!call) continue;
    const [, pid = "", name = "", , target = ""] = call;
    if (name === "fsync" || name === "fdatasync") {
      const onWal = target === walPath;
      if (line.includes("<unfinished ...>")) pendingSync.set(pid, onWal);
      else if (onWal && !/= -1/.test(line)) {
        syncs++;
        syncAt.push(at);
      }
      continue;
    }
    if (name === "pwrite64") {
      if (target === walPath) walWrites.push({ at, text: line });
      continue;
    }
    if (!target.startsWith("TCP:")) continue;
    const request = MUTATION.exec(line)?.[1];
    if (request === undefined) continue;
    const key = intentOf?.(request, line) ?? null;
    mutations.push({
      request,
      syscall: name,
      socket: target,
      syncsBefore: syncs,
      key,
      keyDurableFirst: key === null ? null : durableBefore(key, at, walWrites, syncAt),
    });
    syncs = 0;
  }
  return { mutations, walSyncs: syncAt.length };
}

/** The last WAL write holding `key` before line `at`, then a completed WAL sync between the two. */
function durableBefore(
  key: string,
  at: number,
  walWrites: readonly { at: number; text: string }[],
  syncAt: readonly number[],
): boolean {
  const written = walWrites.filter((w) => w.at < at && w.text.includes(key)).at(-1);
  if (written === undefined) return false;
  return syncAt.some((s) => s > written.at && s < at);
}
