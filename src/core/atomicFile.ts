import { closeSync, fsyncSync, openSync, renameSync, writeSync } from "node:fs";
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
    writeSync(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  if (durable) fsyncDirectory(dirname(path));
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
