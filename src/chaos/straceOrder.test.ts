import { describe, expect, it } from "vitest";
import { analyseTrace } from "./straceOrder.js";

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
