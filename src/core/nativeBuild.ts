/**
 * Telling a native module built for another CPU or Node.js apart from a storage fault (docs/board.md, "Fit
 * the board"). Node reports an add-on for the wrong CPU as ERR_DLOPEN_FAILED with glibc's "cannot open
 * shared object file": read as an I/O error it sends a technician hunting for a bad SD card. The ELF header
 * of the named `.node` file says what it was built for.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { basename } from "node:path";

/** ELF e_machine values of the CPUs a unit or a build machine may have. */
const MACHINE_NAMES: Readonly<Record<number, string>> = {
  3: "x86 (32-bit)",
  40: "32-bit ARM",
  62: "x86-64",
  183: "arm64 (aarch64)",
};

const ARCH_MACHINE: Readonly<Record<string, number>> = { ia32: 3, arm: 40, x64: 62, arm64: 183 };

export const INSTALL_BOARD_RELEASE = "install the release for this board";

/** The ELF machine of `file`, or null when it is not a readable ELF file. */
export function elfMachine(file: string): number | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return null;
  }
  try {
    const head = Buffer.alloc(20);
    if (readSync(fd, head, 0, 20, 0) < 20) return null;
    if (head.readUInt32BE(0) !== 0x7f454c46) return null;
    // e_ident[EI_DATA] 1 = little endian, 2 = big endian.
    return head[5] === 2 ? head.readUInt16BE(18) : head.readUInt16LE(18);
  } finally {
    closeSync(fd);
  }
}

/**
 * What is wrong when loading a native module failed because it was built for another CPU or Node.js
 * ("better_sqlite3.node is built for x86-64; install the release for this board"), or null when `err` is
 * something else.
 */
export function wrongBuild(err: unknown, arch: string = process.arch): string | null {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  const abi =
    /NODE_MODULE_VERSION (\d+)\. This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(message);
  const file = /(\/[^\s:'"]+\.node)\b/.exec(message)?.[1];
  const name = file === undefined ? "a native module" : basename(file);
  if (abi !== null) {
    return `${name} is built for another Node.js (module version ${abi[1]}, this one needs ${abi[2]}); ${INSTALL_BOARD_RELEASE}`;
  }
  if (code !== "ERR_DLOPEN_FAILED" || file === undefined) return null;
  const machine = elfMachine(file);
  if (machine === null || machine === ARCH_MACHINE[arch]) return null;
  return `${name} is built for ${MACHINE_NAMES[machine] ?? `ELF machine ${machine}`}; ${INSTALL_BOARD_RELEASE}`;
}
