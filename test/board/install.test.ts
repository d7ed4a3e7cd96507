import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

// Issue 14 acceptance: scripts/install.sh run twice into a temporary root (its documented --root dry run:
// no apt-get, no useradd, users written into ROOT/etc) leaves the same tree, modes and owners included; the
// second run changes nothing and says so. --uninstall keeps the journal; --purge removes it.

const SCRIPT = resolve("scripts/install.sh");
const HAVE_BASH = spawnSync("bash", ["--version"]).status === 0;
const AS_ROOT = process.getuid?.() === 0;

let work: string | undefined;
afterEach(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
  work = undefined;
});

/** Development packages a checkout's node_modules holds (package.json's devDependencies), as stand-ins. */
const DEV_PACKAGES = ["typescript", "vitest", "esbuild", "@biomejs/biome"];

/**
 * A built checkout to install from, made of links to this one (cheap: cp -a copies a link as a link). Its
 * node_modules is small: unix-dgram and what it loads (copies), and stand-ins of development packages the
 * installer must leave out; with `withModules: false` it is empty, as where unix-dgram was not built.
 */
function source(dir: string, withModules = true): string {
  const src = join(dir, "src");
  mkdirSync(src);
  for (const name of ["dist", "boards", "README.md", "config", "systemd", "package.json"])
    symlinkSync(resolve(name), join(src, name));
  mkdirSync(join(src, "node_modules"));
  if (withModules) {
    for (const name of ["unix-dgram", "bindings", "file-uri-to-path"])
      cpSync(resolve("node_modules", name), join(src, "node_modules", name), { recursive: true });
    for (const name of DEV_PACKAGES) {
      mkdirSync(join(src, "node_modules", name), { recursive: true });
      writeFileSync(join(src, "node_modules", name, "package.json"), JSON.stringify({ name }));
    }
  }
  return src;
}

function install(root: string, ...args: string[]): { code: number | null; out: string } {
  return installWith({}, root, ...args);
}

function installWith(
  env: NodeJS.ProcessEnv,
  root: string,
  ...args: string[]
): { code: number | null; out: string } {
  const r = spawnSync("bash", [SCRIPT, "--root", root, ...args], {
    encoding: "utf8",
    // node as the script finds it: this one.
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`, ...env },
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout + r.stderr };
}

/** Every entry under `root`, without following links: type, mode, owner, and content hash or link target. */
function snapshot(root: string): Record<string, string> {
  const tree: Record<string, string> = {};
  const walk = (rel: string) => {
    const path = join(root, rel);
    const st = lstatSync(path);
    const mode = (st.mode & 0o7777).toString(8).padStart(4, "0");
    const head = `${mode} ${st.uid}:${st.gid}`;
    if (st.isSymbolicLink()) tree[rel] = `${head} -> ${readlinkSync(path)}`;
    else if (st.isDirectory()) {
      tree[rel] = `${head} dir`;
      for (const name of readdirSync(path).sort()) walk(join(rel, name));
    } else tree[rel] = `${head} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`;
  };
  walk(".");
  return tree;
}

describe.skipIf(!HAVE_BASH)("scripts/install.sh --root DIR", () => {
  it("twice into a clean root: the same tree (modes and owners included); the second run changes nothing", {
    timeout: 120_000,
  }, () => {
    work = mkdtempSync(join(tmpdir(), "vendd-install-"));
    const src = source(work);
    const root = join(work, "root");
    mkdirSync(root);
    const first = install(root, "--source", src);
    expect(first.code, first.out).toBe(0);
    expect(first.out).toContain("installed release /opt/vendd/releases/0.1.0");
    const tree = snapshot(root);
    const second = install(root, "--source", src);
    expect(second.code, second.out).toBe(0);
    expect(second.out).toContain("nothing to change");
    expect(snapshot(root)).toEqual(tree);

    const entry = (p: string) => tree[join(".", p)] ?? `missing: ${p}`;
    const vendd = readFileSync(join(root, "etc/passwd"), "utf8")
      .split("\n")
      .find((l) => l.startsWith("vendd:"))
      ?.split(":");
    expect(vendd?.slice(5)).toEqual(["/var/lib/vendd", "/usr/sbin/nologin"]);
    expect(readFileSync(join(root, "etc/group"), "utf8")).toMatch(/^dialout:x:20:vendd$/m);
    const [uid, gid] = [vendd?.[2], vendd?.[3]];
    const owned = (user: string, group: string) =>
      AS_ROOT ? ` ${user === "vendd" ? uid : 0}:${group === "vendd" ? gid : 0} ` : " ";
    // Owners are set only when the dry run runs as root; modes always.
    expect(entry("etc/vendd")).toMatch(new RegExp(`^0750${owned("root", "vendd")}`));
    expect(entry("etc/vendd/config.yaml")).toMatch(new RegExp(`^0640${owned("root", "vendd")}`));
    expect(entry("etc/vendd/secrets.yaml")).toMatch(new RegExp(`^0600${owned("root", "root")}`));
    expect(entry("var/lib/vendd")).toMatch(new RegExp(`^0700${owned("vendd", "vendd")}dir`));
    expect(entry("var/lib/vendd/inbox")).toMatch(new RegExp(`^0700${owned("vendd", "vendd")}dir`));
    expect(entry("var/lib/vendd/inbox/local")).toMatch(new RegExp(`^0700${owned("vendd", "vendd")}dir`));
    expect(entry("opt/vendd/current")).toMatch(/ -> releases\/0\.1\.0$/);
    expect(entry("usr/local/bin/vendd")).toMatch(/^0755 /);
    expect(readFileSync(join(root, "usr/local/bin/vendd"), "utf8")).toBe(
      `#!/bin/sh\nexec ${process.execPath} /opt/vendd/current/dist/src/cli/main.js "$@"\n`,
    );
    // Every unit, pointed at this node; NotifyAccess=main as shipped (unix-dgram loads here).
    for (const unit of readdirSync("systemd")) {
      expect(entry(`etc/systemd/system/${unit}`)).toMatch(/^0644 /);
      const text = readFileSync(join(root, "etc/systemd/system", unit), "utf8");
      expect(text).toBe(
        readFileSync(join("systemd", unit), "utf8").replaceAll("/usr/bin/node", process.execPath),
      );
    }
    expect(existsSync(join(root, "etc/systemd/system/vendd.service.d"))).toBe(false);
    expect(first.out).toContain("NotifyAccess=main (unix-dgram loads)");
  });

  it("makes DIR, prints the next steps, and copies no development package onto the unit (issue 43)", {
    timeout: 120_000,
  }, () => {
    work = mkdtempSync(join(tmpdir(), "vendd-install-"));
    const src = source(work);
    const root = join(work, "new", "root");
    const r = install(root, "--source", src);
    expect(r.code, r.out).toBe(0);
    const modules = join(root, "opt/vendd/releases/0.1.0/node_modules");
    expect(readdirSync(modules).sort()).toEqual(["bindings", "file-uri-to-path", "unix-dgram"]);
    for (const dev of DEV_PACKAGES) expect(existsSync(join(modules, dev)), dev).toBe(false);
    expect(r.out).toContain("NotifyAccess=main (unix-dgram loads)");
    expect(r.out).toContain(`Dry run: the tree is in ${root}; on a unit, install without --root, then:`);
    expect(r.out).toContain("Next: edit /etc/vendd/config.yaml and /etc/vendd/secrets.yaml");
    expect(r.out).toContain(
      "sudo vendd config validate /etc/vendd/config.yaml --secrets /etc/vendd/secrets.yaml",
    );
    expect(r.out).toContain("sudo systemctl enable --now vendd vendd-bundle.path vendd-pull.timer");
  });

  it("unix-dgram missing in the release: the NotifyAccess=all drop-in, and still idempotent", {
    timeout: 120_000,
  }, () => {
    work = mkdtempSync(join(tmpdir(), "vendd-install-"));
    const src = source(work, false);
    const root = join(work, "root");
    mkdirSync(root);
    const first = install(root, "--source", src);
    expect(first.code, first.out).toBe(0);
    const dropin = join(root, "etc/systemd/system/vendd.service.d/notify-access.conf");
    expect(readFileSync(dropin, "utf8")).toMatch(/^\[Service\]\nNotifyAccess=all\n$/m);
    const tree = snapshot(root);
    const second = install(root, "--source", src);
    expect(second.out).toContain("nothing to change");
    expect(snapshot(root)).toEqual(tree);
  });

  it("--uninstall keeps config, journal and user; --purge removes them; both idempotent", {
    timeout: 120_000,
  }, () => {
    work = mkdtempSync(join(tmpdir(), "vendd-install-"));
    const src = source(work);
    const root = join(work, "root");
    mkdirSync(root);
    expect(install(root, "--source", src).code).toBe(0);
    const journal = join(root, "var/lib/vendd/journal.db");
    writeFileSync(journal, "journal bytes");
    // Another member of dialout stays a member.
    const group = join(root, "etc/group");
    writeFileSync(
      group,
      readFileSync(group, "utf8").replace(/^dialout:x:20:vendd$/m, "dialout:x:20:pi,vendd"),
    );

    const un = install(root, "--uninstall");
    expect(un.code, un.out).toBe(0);
    for (const gone of ["opt/vendd", "usr/local/bin/vendd", "etc/systemd/system/vendd.service"])
      expect(existsSync(join(root, gone)), gone).toBe(false);
    expect(readFileSync(journal, "utf8")).toBe("journal bytes");
    expect(existsSync(join(root, "etc/vendd/config.yaml"))).toBe(true);
    expect(readFileSync(join(root, "etc/passwd"), "utf8")).toMatch(/^vendd:/m);
    expect(install(root, "--uninstall").out).toContain("nothing to change");

    const purge = install(root, "--uninstall", "--purge");
    expect(purge.code, purge.out).toBe(0);
    expect(existsSync(join(root, "var/lib/vendd"))).toBe(false);
    expect(existsSync(join(root, "etc/vendd"))).toBe(false);
    expect(readFileSync(join(root, "etc/passwd"), "utf8")).not.toMatch(/^vendd:/m);
    expect(readFileSync(group, "utf8")).toMatch(/^dialout:x:20:pi$/m);
    expect(readFileSync(group, "utf8")).not.toMatch(/^vendd:/m);
    expect(install(root, "--uninstall", "--purge").out).toContain("nothing to change");
  });

  it("refuses bad arguments and a real install by a non-root user without changing anything", () => {
    work = mkdtempSync(join(tmpdir(), "vendd-install-"));
    const root = join(work, "root");
    mkdirSync(root);
    expect(install(root, "--purge").code).toBe(2);
    expect(install(root, "--bogus").code).toBe(2);
    expect(readdirSync(root)).toEqual([]);
  });

  it("refuses a board vendd does not support, saying which are, and changes nothing", {
    timeout: 120_000,
  }, () => {
    work = mkdtempSync(join(tmpdir(), "vendd-install-"));
    const root = join(work, "root");
    mkdirSync(root);
    const bookworm = join(work, "os-release-12");
    writeFileSync(bookworm, 'ID=debian\nVERSION_ID="12"\n');
    const trixie = join(work, "os-release-13");
    writeFileSync(trixie, 'ID=debian\nVERSION_ID="13"\n');
    const sentence =
      "vendd runs on 64-bit Raspberry Pi OS (arm64) on a Pi Zero 2 W, 3, 4 or 5, on 32-bit Raspberry Pi OS only from trixie (Debian 13), and on x86-64";
    const pi1 = installWith({ VENDD_INSTALL_MACHINE: "armv6l" }, root);
    expect(pi1.code).toBe(1);
    expect(pi1.out).toContain(`this board's CPU (armv6l) is not supported. ${sentence}`);
    const armhf12 = installWith(
      { VENDD_INSTALL_MACHINE: "armv7l", VENDD_INSTALL_OS_RELEASE: bookworm },
      root,
    );
    expect(armhf12.code).toBe(1);
    expect(armhf12.out).toContain(`32-bit Debian 12, which has no Node.js 20.18.1. ${sentence}`);
    expect(readdirSync(root)).toEqual([]);
    const armhf13 = installWith(
      { VENDD_INSTALL_MACHINE: "armv7l", VENDD_INSTALL_OS_RELEASE: trixie },
      root,
      "--source",
      source(work),
    );
    expect(armhf13.code, armhf13.out).toBe(0);
  });

  it("refuses a build made for another CPU: install the release for this board", () => {
    work = mkdtempSync(join(tmpdir(), "vendd-install-"));
    const root = join(work, "root");
    mkdirSync(root);
    const src = source(work, false);
    const addonDir = join(src, "node_modules/better-sqlite3/build/Release");
    mkdirSync(addonDir, { recursive: true });
    const head = Buffer.alloc(64);
    head.writeUInt32BE(0x7f454c46, 0);
    head[4] = 2;
    head[5] = 1;
    head.writeUInt16LE(process.arch === "arm64" ? 62 : 183, 18);
    writeFileSync(join(addonDir, "better_sqlite3.node"), head);
    const r = install(root, "--source", src);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/is built for (arm64|x86-64); install the release for this board/);
    expect(readdirSync(root)).toEqual([]);
  });
});
