import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";

/**
 * The journal's bytes and its WAL's, hashed: equal before and after means nothing was written (a refused
 * start, a second process kept out).
 */
export function journalBytes(path: string): string {
  const read = (p: string) => (existsSync(p) ? readFileSync(p) : Buffer.alloc(0));
  const hash = (b: Buffer) => createHash("sha256").update(b).digest("hex");
  return `${hash(read(path))}|${hash(read(`${path}-wal`))}`;
}
