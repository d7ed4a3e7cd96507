import { describe, expect, it } from "vitest";
import { analyseApprovals, analyseTrace, countSyncs } from "./straceOrder.js";

// The trace checker must catch what it looks for: one that always says "ordered" would make the
// write-ahead test pass vacuously.
describe("analyseTrace", () => {
  const wal = "/j/journal.db-wal";
  const post = (key: string) =>
    `7 writev(21<TCP:[127.0.0.1:1->127.0.0.1:2]>, [{iov_base="POST /v10/payments HTTP/1.1\\r\\nx-service-idempotency-key: ${key}\\r\\n"}], 2) = 99`;
  const key = "8d940fd4-7c0b-46a9-9a03-448ab2017d00";
  const frame = `7 pwrite64(19<${wal}>, "...${key}...", 4120, 32) = 4120`;
  const sync = `7 fsync(19<${wal}>) = 0`;
  const resolve = () => key;

  it("accepts a request sent after its intent's frame was written and synced", () => {
    const r = analyseTrace([frame, sync, post(key)].join("\n"), wal, resolve);
    expect(r.mutations).toMatchObject([{ syscall: "writev", syncsBefore: 1, keyDurableFirst: true }]);
  });

  it("rejects a request sent before the sync, even with an older sync before it", () => {
    const r = analyseTrace([sync, frame, post(key), sync].join("\n"), wal, resolve);
    expect(r.mutations[0]?.keyDurableFirst).toBe(false);
  });

  it("counts an unfinished fsync at its resumed line only", () => {
    const r = analyseTrace(
      [frame, `7 fsync(19<${wal}> <unfinished ...>`, post(key), "7 <... fsync resumed>) = 0"].join("\n"),
      wal,
      resolve,
    );
    expect(r.mutations[0]?.syncsBefore).toBe(0);
    expect(r.mutations[0]?.keyDurableFirst).toBe(false);
  });
});

describe("analyseApprovals", () => {
  const wal = "/j/journal.db-wal";
  const session = "0b8d6f4e-2f6a-4f0e-9a51-3c1f1b6f7a10";
  const frame = `7 pwrite64(19<${wal}>, "...${session}...", 4120, 32) = 4120`;
  const sync = `7 fsync(19<${wal}>) = 0`;
  const approve = `9 write(23</dev/pts/4>, "C,VEND,1.50\\n", 12) = 12`;
  const deny = `9 write(23</dev/pts/4>, "C,VEND,-1\\n", 10) = 10`;
  const sessionOf = (amount: string) => (amount === "1.50" ? session : null);

  it("accepts an approval line written after its vend row was written and synced; ignores a deny", () => {
    const r = analyseApprovals([frame, sync, deny, approve].join("\n"), wal, sessionOf);
    expect(r).toEqual([
      { line: "C,VEND,1.50", device: "/dev/pts/4", sessionId: session, durableFirst: true },
    ]);
  });

  it("rejects an approval line written before the sync of its vend row", () => {
    const r = analyseApprovals([sync, frame, approve, sync].join("\n"), wal, sessionOf);
    expect(r[0]?.durableFirst).toBe(false);
  });

  it("counts completed syncs by file, a checkpoint's WAL sync apart from a commit's", () => {
    const trace = [
      `7 pwrite64(19<${wal}>, "...", 4120, 32) = 4120`,
      sync,
      `7 fsync(19<${wal}>) = 0`,
      `7 pwrite64(20</j/journal.db>, "...", 4096, 0) = 4096`,
      `7 fdatasync(20</j/journal.db>) = 0`,
      `7 fsync(21</j/journal.db.owner.tmp>) = 0`,
      `7 fsync(19<${wal}>) = -1 EIO (Input/output error)`,
      `8 fsync(19<${wal}> <unfinished ...>`,
      "8 <... fsync resumed>) = 0",
      // The next commit restarts the WAL: its new header is synced before the frames.
      `7 pwrite64(19<${wal}>, "7\\177\\6\\202", 32, 0) = 32`,
      sync,
      `7 pwrite64(19<${wal}>, "...", 4120, 32) = 4120`,
      sync,
    ].join("\n");
    expect(countSyncs(trace, "/j/journal.db")).toEqual({ commit: 3, checkpointWal: 2, db: 1, other: 1 });
  });
});
