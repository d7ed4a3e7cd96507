import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export interface AtomicWriteOptions {
  /** File mode of a newly written file (default 0o644, less the umask). */
  mode?: number;
  /**
   * When false, the data and the rename are not fsynced: the file is whole or absent after a crash, but may
   * be the old one. Default true: written, fsynced, renamed over the target, the directory fsynced.
   */
  durable?: boolean;
}

/**
 * Replaces `path` with `data` so that a reader (or a restart after power loss) sees the whole old or the
 * whole new file, never a mix: write a temporary file beside it, fsync it, rename it over the target, fsync
 * the directory (reliability.md §1). The one way vendd replaces a file it owns.
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): void {
  const durable = opts.durable ?? true;
  const tmp = join(dirname(path), `.${basename(path)}.tmp`);
  const fd = openSync(tmp, "w", opts.mode ?? 0o644);
  try {
    // Exactly the mode asked for, whatever the umask (and over a stale temporary file's mode).
    if (opts.mode !== undefined) fchmodSync(fd, opts.mode);
    writeSync(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  if (durable) fsyncDirectory(dirname(path));
}

/**
 * Creates the empty file `path` mode 0600 whatever the umask, unless it exists: a database that will hold
 * money or secrets (the journal, the fleet's database, their lock files). SQLite gives its -wal and -shm
 * files the mode of the database file.
 */
export function createPrivateFile(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return;
    throw err;
  }
  try {
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

/** fsyncs a directory, so that a rename or a new entry in it survives power loss. */
export function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
