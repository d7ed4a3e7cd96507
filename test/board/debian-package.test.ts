/**
 * The Debian packages of a release (issue 34; docs/board.md, "Packages"): lintian reports no error;
 * installed into a root directory (dpkg --root, maintainer scripts outside a chroot honouring $DPKG_ROOT, so
 * this machine is untouched) they create the user, directories and modes; an upgrade from the previous
 * version keeps the edited config and the journal; remove keeps them; purge removes them and the user.
 * Needs `npm run release -- --arch ARCH` first (.ci/run builds arm64); skipped, saying so, when its output
 * is missing outside CI.
 */
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { debPath, dpkg, dpkgMissing, emptyRoot, IN_CI, VERSION } from "../support/board.js";

const ARCH = existsSync(debPath("vendd", "arm64")) ? "arm64" : "amd64";
const UNIT_DEB = debPath("vendd", ARCH);
const FLEET_DEB = debPath("vendd-fleet", ARCH);
const why = !existsSync(UNIT_DEB)
  ? `${UNIT_DEB} is missing: run \`npm run release -- --arch arm64\` first`
  : dpkgMissing();
if (why !== null && IN_CI) throw new Error(`debian-package: ${why}`);
if (why !== null) console.warn(`Debian package tests skipped: ${why}`);

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/** The same package labelled `version` (the previous release, for the upgrade test). */
function relabel(deb: string, version: string): string {
  const dir = mkdtempSync(join(tmpdir(), "vendd-deb-old-"));
  cleanup.push(dir);
  const tree = join(dir, "tree");
  expect(spawnSync("dpkg-deb", ["-R", deb, tree]).status).toBe(0);
  const control = join(tree, "DEBIAN/control");
  writeFileSync(control, readFileSync(control, "utf8").replace(/^Version: .*$/m, `Version: ${version}`));
  const out = join(dir, "old.deb");
  const r = spawnSync("dpkg-deb", ["--root-owner-group", "-Zxz", "--build", tree, out], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return out;
}

function mode(path: string): string {
  return (statSync(path).mode & 0o7777).toString(8);
}

function owner(root: string, path: string): string {
  const st = statSync(join(root, path));
  const name = (file: string, id: number) =>
    readFileSync(join(root, "etc", file), "utf8")
      .split("\n")
      .find((l) => l.split(":")[2] === String(id))
      ?.split(":")[0] ?? String(id);
  return `${name("passwd", st.uid)}:${name("group", st.gid)}`;
}

describe.skipIf(why !== null)(`Debian packages (${ARCH})`, () => {
  it("lintian reports no error for either package", { timeout: 300_000 }, () => {
    for (const deb of [UNIT_DEB, FLEET_DEB]) {
      const r = spawnSync("lintian", ["--no-cfg", deb], { encoding: "utf8" });
      const errors = `${r.stdout}`.split("\n").filter((l) => l.startsWith("E:"));
      expect(errors, r.stdout).toEqual([]);
    }
  });

  it("install, upgrade keeping config and journal, remove keeping them, purge removing them", {
    timeout: 120_000,
  }, () => {
    const root = emptyRoot("vendd-deb-root-", ARCH);
    cleanup.push(root);
    const old = relabel(UNIT_DEB, "0.0.1");

    let r = dpkg(root, ["-i", old]);
    expect(r.status, r.out).toBe(0);
    // A first install starts nothing and says what to do next (issue 43).
    expect(r.out).toContain(`vendd ${VERSION}: installed; nothing is started or enabled. Next (man vendd`);
    expect(r.out).toContain("sudo systemctl enable --now vendd vendd-bundle.path vendd-pull.timer");
    expect(readFileSync(join(root, "etc/passwd"), "utf8")).toMatch(
      /^vendd:x:\d+:\d+:vendd payment unit:\/var\/lib\/vendd:\/usr\/sbin\/nologin$/m,
    );
    expect(readFileSync(join(root, "etc/group"), "utf8")).toMatch(/^dialout:x:20:vendd$/m);
    expect(mode(join(root, "etc/vendd"))).toBe("750");
    expect(owner(root, "etc/vendd")).toBe("root:vendd");
    expect(mode(join(root, "etc/vendd/config.yaml"))).toBe("640");
    expect(owner(root, "etc/vendd/config.yaml")).toBe("root:vendd");
    expect(mode(join(root, "etc/vendd/secrets.yaml"))).toBe("600");
    expect(owner(root, "etc/vendd/secrets.yaml")).toBe("root:root");
    for (const d of ["var/lib/vendd", "var/lib/vendd/inbox", "var/lib/vendd/inbox/local"]) {
      expect(mode(join(root, d)), d).toBe("700");
      expect(owner(root, d), d).toBe("vendd:vendd");
    }
    expect(readlinkSync(join(root, "opt/vendd/current"))).toBe("../../usr/lib/vendd");
    expect(existsSync(join(root, "opt/vendd/current/dist/src/cli/main.js"))).toBe(true);
    expect(existsSync(join(root, "lib/systemd/system/vendd.service"))).toBe(true);
    // Nothing enabled: no wants links anywhere.
    expect(existsSync(join(root, "etc/systemd/system/multi-user.target.wants"))).toBe(false);

    // The operator's edits and the journal.
    appendFileSync(join(root, "etc/vendd/config.yaml"), "\n# edited on the unit\n");
    writeFileSync(join(root, "etc/vendd/secrets.yaml"), "v10: { clientSecret: s }\n");
    writeFileSync(join(root, "var/lib/vendd/journal.db"), "journal bytes");
    const edited = readFileSync(join(root, "etc/vendd/config.yaml"), "utf8");

    r = dpkg(root, ["-i", UNIT_DEB]);
    expect(r.status, r.out).toBe(0);
    // An upgrade restarts the daemon as Debian users expect, or says plainly that it did not and what to
    // do (issue 43): here no systemd runs the root, so it says so.
    expect(r.out).toContain(
      `vendd: upgraded from 0.0.1 to ${VERSION}; the daemon was NOT restarted (installed into ${root}, no running systemd here): on the unit, 'sudo systemctl restart vendd'`,
    );
    expect(r.out).toContain("Next: 'sudo vendd doctor --secrets /etc/vendd/secrets.yaml'");
    expect(readFileSync(join(root, "etc/vendd/config.yaml"), "utf8")).toBe(edited);
    expect(readFileSync(join(root, "etc/vendd/secrets.yaml"), "utf8")).toBe("v10: { clientSecret: s }\n");
    expect(readFileSync(join(root, "var/lib/vendd/journal.db"), "utf8")).toBe("journal bytes");
    const installed = spawnSync(
      "dpkg-query",
      [`--admindir=${root}/var/lib/dpkg`, "-W", "--showformat=$" + "{Version}", "vendd"],
      { encoding: "utf8" },
    );
    expect(installed.stdout).toBe(VERSION);

    // A unit running a release a bundle installed is not restarted by the package, and is told why.
    mkdirSync(join(root, "opt/vendd/releases/r7"), { recursive: true });
    symlinkSync("releases/r7", join(root, "opt/vendd/current.tmp"));
    renameSync(join(root, "opt/vendd/current.tmp"), join(root, "opt/vendd/current"));
    r = dpkg(root, ["-i", UNIT_DEB]);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain(
      `vendd: upgraded from ${VERSION} to ${VERSION}; not restarted: the daemon runs the release a bundle installed (releases/r7), not this package's`,
    );
    expect(readlinkSync(join(root, "opt/vendd/current"))).toBe("releases/r7");
    rmSync(join(root, "opt/vendd/current"));
    symlinkSync("../../usr/lib/vendd", join(root, "opt/vendd/current"));

    r = dpkg(root, ["--remove", "vendd"]);
    expect(r.status, r.out).toBe(0);
    expect(existsSync(join(root, "usr/lib/vendd"))).toBe(false);
    expect(existsSync(join(root, "opt/vendd/current"))).toBe(false);
    expect(readFileSync(join(root, "etc/vendd/config.yaml"), "utf8")).toBe(edited);
    expect(readFileSync(join(root, "var/lib/vendd/journal.db"), "utf8")).toBe("journal bytes");
    expect(readFileSync(join(root, "etc/passwd"), "utf8")).toMatch(/^vendd:/m);

    r = dpkg(root, ["--purge", "vendd"]);
    expect(r.status, r.out).toBe(0);
    for (const gone of ["etc/vendd", "var/lib/vendd", "opt/vendd"])
      expect(existsSync(join(root, gone)), gone).toBe(false);
    expect(readFileSync(join(root, "etc/passwd"), "utf8")).not.toMatch(/^vendd:/m);
    expect(readFileSync(join(root, "etc/group"), "utf8")).not.toMatch(/^vendd:/m);
    expect(readFileSync(join(root, "etc/group"), "utf8")).toMatch(/^dialout:x:20:$/m);
  });

  it("the fleet package: its user, config and state directory; purge removes them", {
    timeout: 120_000,
  }, () => {
    const root = emptyRoot("vendd-fleet-deb-root-", ARCH);
    cleanup.push(root);
    let r = dpkg(root, ["-i", FLEET_DEB]);
    expect(r.status, r.out).toBe(0);
    expect(owner(root, "etc/vendd-fleet/fleet.yaml")).toBe("root:vendd-fleet");
    expect(mode(join(root, "etc/vendd-fleet/fleet.yaml"))).toBe("640");
    expect(owner(root, "var/lib/vendd-fleet")).toBe("vendd-fleet:vendd-fleet");
    expect(mode(join(root, "var/lib/vendd-fleet"))).toBe("700");
    expect(existsSync(join(root, "lib/systemd/system/vendd-fleet.service"))).toBe(true);
    writeFileSync(join(root, "var/lib/vendd-fleet/fleet.db"), "db");
    r = dpkg(root, ["--remove", "vendd-fleet"]);
    expect(r.status, r.out).toBe(0);
    expect(existsSync(join(root, "var/lib/vendd-fleet/fleet.db"))).toBe(true);
    r = dpkg(root, ["--purge", "vendd-fleet"]);
    expect(r.status, r.out).toBe(0);
    expect(existsSync(join(root, "var/lib/vendd-fleet"))).toBe(false);
    expect(readFileSync(join(root, "etc/passwd"), "utf8")).not.toMatch(/^vendd-fleet:/m);
  });
});
