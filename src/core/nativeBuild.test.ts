import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { classifyJournalError } from "../journal/problems.js";
import { elfMachine, wrongBuild } from "./nativeBuild.js";

const dir = mkdtempSync(join(tmpdir(), "vendd-native-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The first bytes of a 64-bit little-endian ELF shared object for `machine`. */
function fakeAddon(name: string, machine: number): string {
  const head = Buffer.alloc(64);
  head.writeUInt32BE(0x7f454c46, 0);
  head[4] = 2; // ELFCLASS64
  head[5] = 1; // little endian
  head.writeUInt16LE(3, 16); // ET_DYN
  head.writeUInt16LE(machine, 18);
  const file = join(dir, name);
  writeFileSync(file, head);
  return file;
}

/** What Node throws on an arm64 board for an add-on built for x86-64 (glibc's words). */
function dlopenError(file: string): Error {
  return Object.assign(new Error(`${file}: cannot open shared object file: No such file or directory`), {
    code: "ERR_DLOPEN_FAILED",
  });
}

describe("a native module built for another CPU or Node.js", () => {
  it("reads the ELF machine", () => {
    expect(elfMachine(fakeAddon("a.node", 62))).toBe(62);
    expect(elfMachine(join(dir, "missing.node"))).toBeNull();
  });

  it("names the CPU it was built for and the next step", () => {
    const file = fakeAddon("better_sqlite3.node", 62);
    expect(wrongBuild(dlopenError(file), "arm64")).toBe(
      "better_sqlite3.node is built for x86-64; install the release for this board",
    );
    expect(wrongBuild(dlopenError(fakeAddon("b.node", 183)), "x64")).toBe(
      "b.node is built for arm64 (aarch64); install the release for this board",
    );
  });

  it("says nothing when the module is built for this CPU (the failure is something else)", () => {
    expect(wrongBuild(dlopenError(fakeAddon("c.node", 183)), "arm64")).toBeNull();
    expect(wrongBuild(new Error("SQLITE_IOERR: disk I/O error"), "arm64")).toBeNull();
  });

  it("names another Node.js's module version", () => {
    const err = new Error(
      "The module '/opt/vendd/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 108. This version of Node.js requires\nNODE_MODULE_VERSION 115. Please try re-compiling",
    );
    expect(wrongBuild(err)).toBe(
      "better_sqlite3.node is built for another Node.js (module version 108, this one needs 115); install the release for this board",
    );
  });

  it("the journal reports it as a wrong build, not a storage fault to hunt for", () => {
    const file = fakeAddon("better_sqlite3.node", process.arch === "arm64" ? 62 : 183);
    const err = classifyJournalError(dlopenError(file), join(dir, "journal.db"));
    expect(err.problem?.cause).toBe("wrong build");
    expect(err.problem?.detail).toMatch(
      /is built for (x86-64|arm64 \(aarch64\)); install the release for this board$/,
    );
    expect(err.problem?.nextStep).not.toMatch(/storage|SD card/);
  });
});
