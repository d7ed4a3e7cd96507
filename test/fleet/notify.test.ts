/**
 * `vendd fleet serve` under systemd (vendd-fleet.service: Type=notify, NotifyAccess=main, WatchdogSec=):
 * READY=1 with a STATUS once it listens, WATCHDOG=1 at half of WATCHDOG_USEC, STOPPING=1 on SIGTERM, each
 * from the server's own PID (SO_PASSCRED at a python3 receiver), as test/unit/daemon-notify.test.ts proves for
 * the unit's daemon.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

const HAVE_PYTHON = spawnSync("python3", ["-c", "import socket; socket.SO_PASSCRED"]).status === 0;
if (!HAVE_PYTHON) console.warn("python3 not installed: the fleet notify test is skipped (CI installs it)");

const RECEIVER = `
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind(sys.argv[1])
print(json.dumps({"bound": True}), flush=True)
while True:
    data, anc, _f, _a = s.recvmsg(65536, socket.CMSG_SPACE(12))
    pid = None
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = struct.unpack("iII", payload[:12])[0]
    print(json.dumps({"pid": pid, "text": data.decode()}), flush=True)
`;

const dir = mkdtempSync(join(tmpdir(), "vendd-fleet-notify-"));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`no ${what} in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!HAVE_PYTHON)("vendd fleet serve: systemd notify", () => {
  it("READY with a status, watchdog pings and STOPPING, from the server's own PID", {
    timeout: 60_000,
  }, async () => {
    const socket = join(dir, "notify.sock");
    const receiver = spawn("python3", ["-c", RECEIVER, socket], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(receiver);
    const got: Array<{ pid: number | null; text: string }> = [];
    let bound = false;
    createInterface({ input: receiver.stdout }).on("line", (line) => {
      const v = JSON.parse(line) as { bound?: boolean; pid?: number | null; text?: string };
      if (v.bound === true) bound = true;
      else if (typeof v.text === "string") got.push({ pid: v.pid ?? null, text: v.text });
    });
    await until(() => bound, 10_000, "bound receiver");
    const server = spawn(
      process.execPath,
      [
        CLI,
        "fleet",
        "serve",
        "--db",
        join(dir, "fleet.db"),
        "--listen",
        "127.0.0.1:0",
        "--log-level",
        "warn",
      ],
      {
        env: { ...process.env, NOTIFY_SOCKET: socket, WATCHDOG_USEC: "400000" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    children.push(server);
    await until(() => got.some((d) => d.text.startsWith("READY=1")), 30_000, "READY=1");
    const ready = got.find((d) => d.text.startsWith("READY=1"));
    expect(ready?.pid).toBe(server.pid);
    expect(ready?.text).toMatch(/^READY=1\nSTATUS=serving http:\/\/127\.0\.0\.1:\d+\n$/);
    await until(
      () => got.filter((d) => d.text === "WATCHDOG=1\n").length >= 3,
      10_000,
      "three watchdog pings",
    );
    expect(got.filter((d) => d.text === "WATCHDOG=1\n").every((d) => d.pid === server.pid)).toBe(true);
    server.kill("SIGTERM");
    await until(() => got.some((d) => d.text === "STOPPING=1\n"), 10_000, "STOPPING=1");
  });
});
