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
  const lines = trace.split("\n");
  const { syncAt, walWrites } = scanWal(lines, walPath);
  const mutations: MutationWrite[] = [];
  let previous = -1;
  for (const [at, line] of lines.entries()) {
    const call = CALL.exec(line);
    if (!call) continue;
    const [, , name = "", , target = ""] = call;
    if (!target.startsWith("TCP:") || name === "fsync" || name === "fdatasync" || name === "pwrite64")
      continue;
    const request = MUTATION.exec(line)?.[1];
    if (request === undefined) continue;
    const key = intentOf?.(request, line) ?? null;
    mutations.push({
      request,
      syscall: name,
      socket: target,
      syncsBefore: syncAt.filter((s) => s > previous && s < at).length,
      key,
      keyDurableFirst: key === null ? null : durableBefore(key, at, walWrites, syncAt),
    });
    previous = at;
  }
  return { mutations, walSyncs: syncAt.length };
}

/** One approval line (`C,VEND,<amount>`) as the daemon wrote it to the serial line (PTY or tty). */
export interface ApprovalWrite {
  /** The line as written, e.g. `C,VEND,1.50`. */
  line: string;
  /** The serial device, as strace names it. */
  device: string;
  /** The session the approval belongs to (`sessionOf`), or null when none matched. */
  sessionId: string | null;
  /**
   * True when the last WAL frame written before the line that holds the session's id (the approval's vend
   * row) was followed by a completed WAL fsync before the line's first byte; null when no session matched.
   */
  durableFirst: boolean | null;
}

const APPROVAL = /"(C,VEND,(\d+(?:\.\d+)?))(?:\\r)?\\n/;

/**
 * Reads the same trace for the approval lines written to the serial device (`/dev/…`) and checks that the
 * approval was journaled and synced first (the approval's fsync precedes the approval bytes).
 * @param sessionOf the session a line's amount (as written, e.g. `1.50`) belongs to, or null.
 */
export function analyseApprovals(
  trace: string,
  walPath: string,
  sessionOf: (amount: string) => string | null,
): ApprovalWrite[] {
  const lines = trace.split("\n");
  const { syncAt, walWrites } = scanWal(lines, walPath);
  const approvals: ApprovalWrite[] = [];
  for (const [at, line] of lines.entries()) {
    const call = CALL.exec(line);
    if (!call) continue;
    const [, , name = "", , target = ""] = call;
    if ((name !== "write" && name !== "writev") || !target.startsWith("/dev/")) continue;
    const m = APPROVAL.exec(line);
    if (!m) continue;
    const sessionId = sessionOf(m[2] ?? "");
    approvals.push({
      line: m[1] ?? "",
      device: target,
      sessionId,
      durableFirst: sessionId === null ? null : durableBefore(sessionId, at, walWrites, syncAt),
    });
  }
  return approvals;
}

/** Line numbers of completed WAL syncs, and of WAL frame writes with their text. */
function scanWal(
  lines: readonly string[],
  walPath: string,
): { syncAt: number[]; walWrites: { at: number; text: string }[] } {
  const pendingSync = new Map<string, boolean>();
  const syncAt: number[] = [];
  const walWrites: { at: number; text: string }[] = [];
  for (const [at, line] of lines.entries()) {
    const resumed = RESUMED.exec(line);
    if (resumed) {
      const pid = resumed[1] ?? "";
      if (pendingSync.get(pid) === true && !/= -1/.test(line)) syncAt.push(at);
      pendingSync.delete(pid);
      continue;
    }
    const call = CALL.exec(line);
    if (!call) continue;
    const [, pid = "", name = "", , target = ""] = call;
    if (name === "fsync" || name === "fdatasync") {
      const onWal = target === walPath;
      if (line.includes("<unfinished ...>")) pendingSync.set(pid, onWal);
      else if (onWal && !/= -1/.test(line)) syncAt.push(at);
    } else if (name === "pwrite64" && target === walPath) walWrites.push({ at, text: line });
  }
  return { syncAt, walWrites };
}

/** Completed fsync/fdatasync calls of a trace, by file and purpose. */
export interface SyncCounts {
  /** WAL syncs of commits (each durable commit is one). */
  commit: number;
  /**
   * WAL syncs a checkpoint causes: the one that begins it (the next journal I/O copies pages into the
   * database file), and the sync of the WAL's new header when the next commit restarts the WAL from its
   * beginning (a 32-byte write at offset 0, synced before the frames).
   */
  checkpointWal: number;
  /** Syncs of the database file (checkpoints). */
  db: number;
  /** Syncs of any other file (the owner sidecar, its directory). */
  other: number;
}

/**
 * Counts the completed fsync/fdatasync calls of a trace (`-e trace=fsync,fdatasync,pwrite64` at least) by
 * file; a WAL sync followed by a write to the database file is a checkpoint's, not a commit's.
 */
export function countSyncs(trace: string, journalPath: string): SyncCounts {
  const wal = `${journalPath}-wal`;
  const events: ("walSync" | "dbSync" | "walWrite" | "walHeader" | "dbWrite")[] = [];
  const counts: SyncCounts = { commit: 0, checkpointWal: 0, db: 0, other: 0 };
  const pending = new Map<string, string>();
  const synced = (target: string) => {
    if (target === wal) events.push("walSync");
    else if (target === journalPath) events.push("dbSync");
    else counts.other++;
  };
  for (const line of trace.split("\n")) {
    const resumed = RESUMED.exec(line);
    if (resumed) {
      const target = pending.get(resumed[1] ?? "");
      if (target !== undefined && !/= -1/.test(line)) synced(target);
      pending.delete(resumed[1] ?? "");
      continue;
    }
    const call = CALL.exec(line);
    if (!call) continue;
    const [, pid = "", name = "", , target = ""] = call;
    if (name === "pwrite64") {
      if (target === wal) events.push(/, 32, 0\) = 32$/.test(line) ? "walHeader" : "walWrite");
      else if (target === journalPath) events.push("dbWrite");
    } else if (name === "fsync" || name === "fdatasync") {
      if (line.includes("<unfinished ...>")) pending.set(pid, target);
      else if (!/= -1/.test(line)) synced(target);
    }
  }
  for (const [i, e] of events.entries()) {
    if (e === "dbSync") counts.db++;
    else if (e === "walSync") {
      if (events[i + 1] === "dbWrite" || events[i - 1] === "walHeader") counts.checkpointWal++;
      else counts.commit++;
    }
  }
  return counts;
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
