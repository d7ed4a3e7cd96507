/**
 * Releases on disk: `<root>/releases/<version>/` holds one built app, `<root>/current` is a relative
 * symlink to the one vendd.service runs. Installing extracts into a hidden partial directory, syncs it and
 * renames it into place; switching replaces the symlink atomically (new link under a temporary name,
 * rename over `current`, fsync the directory). The previous release stays for a rollback, so `current`
 * always names a whole release: never a mix of old and new.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
} from "node:fs";
import { join } from "node:path";
import { fsyncDirectory } from "../core/atomicFile.js";

export const RELEASES_DIR = "releases";
export const CURRENT_LINK = "current";

/** The link text of `current` (e.g. `releases/7`), or null when there is none. */
export function currentRelease(root: string): string | null {
  try {
    return readlinkSync(join(root, CURRENT_LINK));
  } catch {
    return null;
  }
}

/**
 * Extracts a release tarball (gzip tar) into `releases/<name>`, whole or not at all. A leftover directory
 * of the same name that is not in use (an earlier interrupted or rolled-back attempt) is replaced.
 */
export function installRelease(root: string, name: string, tarball: Buffer): string {
  const dir = join(root, RELEASES_DIR);
  mkdirSync(dir, { recursive: true });
  const target = join(dir, name);
  const link = `${RELEASES_DIR}/${name}`;
  if (currentRelease(root) === link) throw new Error(`release ${name} is the one running`);
  const partial = join(dir, `.${name}.partial`);
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  try {
    execFileSync("tar", ["-xzf", "-", "-C", partial, "--no-same-owner", "--no-same-permissions"], {
      input: tarball,
      stdio: ["pipe", "ignore", "pipe"],
      maxBuffer: 1024 * 1024,
    });
    // Every extracted file is on disk before the directory takes its final name.
    execFileSync("sync", ["-f", partial]);
  } catch (err) {
    // A refused tarball leaves nothing behind.
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
  rmSync(target, { recursive: true, force: true });
  renameSync(partial, target);
  fsyncDirectory(dir);
  return link;
}

/** Points `current` at `link` (or removes it for null) atomically and durably. */
export function switchCurrent(root: string, link: string | null): void {
  const current = join(root, CURRENT_LINK);
  if (link === null) {
    if (existsSync(current) || currentRelease(root) !== null) unlinkSync(current);
    fsyncDirectory(root);
    return;
  }
  const tmp = join(root, `.${CURRENT_LINK}.tmp`);
  rmSync(tmp, { force: true });
  symlinkSync(link, tmp);
  renameSync(tmp, current);
  fsyncDirectory(root);
}

/** Removes every release but `keep` (and leftover partial directories). */
export function pruneReleases(root: string, keep: ReadonlySet<string>): void {
  const dir = join(root, RELEASES_DIR);
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (!keep.has(`${RELEASES_DIR}/${name}`)) rmSync(join(dir, name), { recursive: true, force: true });
  }
  fsyncDirectory(dir);
}
