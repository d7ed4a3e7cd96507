/**
 * nfc-pcsc without pcscd (issue 34): its native constructor retries SCardEstablishContext for as long as the
 * PC/SC service is missing, a busy loop that never returns and blocks the whole process (daemon, doctor).
 * The driver asks pcscd's socket first and reports the station degraded, saying so. Run in a child process
 * against this checkout's build (`dist/`): the old code hung there, which the spawn's timeout shows.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { pcscdDown, pcscSocketPath } from "./factory.js";

const FACTORY = pathToFileURL(resolve("dist/drivers/nfc/factory.js")).href;
/** nfc-pcsc loads here (this machine has libpcsclite1), or the check has nothing to show. */
const loads =
  spawnSync(process.execPath, ["-e", 'require("nfc-pcsc")'], { encoding: "utf8", timeout: 20_000 }).status ===
  0;

/** startPcsc() of the built driver in a child, with PCSCLITE_CSOCK_NAME (libpcsclite's own variable). */
function startInChild(socket: string) {
  const code = `const { startPcsc } = await import(${JSON.stringify(FACTORY)});
const r = await startPcsc();
console.log(JSON.stringify({ nfc: r.nfc !== null, reason: r.reason }));
process.exit(0);`;
  return spawnSync(process.execPath, ["--input-type=module", "-e", code], {
    encoding: "utf8",
    timeout: 20_000,
    env: { ...process.env, PCSCLITE_CSOCK_NAME: socket },
  });
}

describe("nfc-pcsc when pcscd is not running", () => {
  const dir = mkdtempSync(join(tmpdir(), "vendd-pcscd-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("libpcsclite's socket path: PCSCLITE_CSOCK_NAME, else Debian's /run/pcscd/pcscd.comm", () => {
    expect(pcscSocketPath({})).toBe("/run/pcscd/pcscd.comm");
    expect(pcscSocketPath({ PCSCLITE_CSOCK_NAME: "/tmp/x.comm" })).toBe("/tmp/x.comm");
  });

  it("no socket, or one nothing listens on: the reason says pcscd is not running and what to do", async () => {
    const none = join(dir, "none.comm");
    expect(await pcscdDown(none)).toBe(
      `pcscd is not running (nothing listens on ${none}): apt-get install pcscd libccid; systemctl enable --now pcscd.socket`,
    );
    // A socket file left behind by a pcscd that died: connecting is refused.
    const stale = join(dir, "stale.comm");
    const py = spawnSync("python3", [
      "-c",
      "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])",
      stale,
    ]);
    expect(py.status).toBe(0);
    expect(await pcscdDown(stale)).toContain(`pcscd is not running (nothing listens on ${stale})`);
  });

  it.skipIf(!loads)("the real nfc-pcsc: startPcsc returns at once with that reason, no hang", () => {
    const socket = join(dir, "none.comm");
    const started = Date.now();
    const r = startInChild(socket);
    expect(r.error, "startPcsc hung (nfc-pcsc's constructor loops while pcscd is missing)").toBeUndefined();
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim()) as unknown).toEqual({
      nfc: false,
      reason: `pcscd is not running (nothing listens on ${socket}): apt-get install pcscd libccid; systemctl enable --now pcscd.socket`,
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
