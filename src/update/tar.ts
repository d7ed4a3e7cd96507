/**
 * The few bytes of POSIX ustar a bundle needs: regular files with short names, written and read in order.
 * A bundle is a tar so that standard tools can open it (`tar -xf b.vbundle payload.tar` and then
 * `minisign -V`) and so that it can be read front to back without an index.
 */

export class TarError extends Error {
  override readonly name = "TarError";
  constructor(
    readonly code: "truncated" | "malformed",
    message: string,
  ) {
    super(message);
  }
}

export interface TarEntry {
  name: string;
  data: Buffer;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function header(name: string, size: number): Buffer {
  if (Buffer.byteLength(name) > 100 || !/^[A-Za-z0-9._/-]+$/.test(name)) {
    throw new TarError("malformed", `tar entry name ${JSON.stringify(name)} is not a short plain name`);
  }
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, "utf8");
  h.write(octal(0o644, 8), 100, "latin1");
  h.write(octal(0, 8), 108, "latin1");
  h.write(octal(0, 8), 116, "latin1");
  h.write(octal(size, 12), 124, "latin1");
  h.write(octal(0, 12), 136, "latin1");
  h.write("        ", 148, "latin1");
  h.write("0", 156, "latin1");
  h.write("ustar\0", 257, "latin1");
  h.write("00", 263, "latin1");
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
  return h;
}

/** One tar archive of `entries`, ending with the two zero blocks. */
export function writeTar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    parts.push(header(e.name, e.data.length), e.data);
    const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

function field(h: Buffer, start: number, len: number): string {
  const raw = h.subarray(start, start + len).toString("latin1");
  const nul = raw.indexOf("\0");
  return nul < 0 ? raw : raw.slice(0, nul);
}

function parseOctal(h: Buffer, start: number, len: number, what: string): number {
  const text = field(h, start, len).trim();
  if (!/^[0-7]{1,11}$/.test(text)) throw new TarError("malformed", `tar header: bad ${what}`);
  return Number.parseInt(text, 8);
}

/**
 * The regular files of a tar archive, in order. Refuses a header whose checksum is wrong, an entry that is
 * not a regular file, a duplicate name, and an archive that ends before its end-of-archive blocks: a
 * truncated download is never read as a shorter bundle.
 */
export function readTar(buf: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  const seen = new Set<string>();
  let off = 0;
  for (;;) {
    if (off + BLOCK > buf.length) throw new TarError("truncated", "the archive ends before its end marker");
    const h = buf.subarray(off, off + BLOCK);
    if (h.every((b) => b === 0)) {
      const next = buf.subarray(off + BLOCK, off + 2 * BLOCK);
      if (next.length < BLOCK) throw new TarError("truncated", "the archive ends inside its end marker");
      if (!next.every((b) => b === 0)) throw new TarError("malformed", "a zero block inside the archive");
      if (buf.subarray(off + 2 * BLOCK).some((b) => b !== 0)) {
        throw new TarError("malformed", "data after the end of the archive");
      }
      return entries;
    }
    const stored = parseOctal(h, 148, 8, "checksum");
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : (h[i] ?? 0);
    if (sum !== stored) throw new TarError("malformed", "tar header checksum mismatch (a damaged bundle)");
    const name = field(h, 0, 100);
    const type = field(h, 156, 1);
    if (type !== "0" && type !== "")
      throw new TarError("malformed", `tar entry ${JSON.stringify(name)} is not a file`);
    if (seen.has(name)) throw new TarError("malformed", `tar entry ${JSON.stringify(name)} appears twice`);
    seen.add(name);
    const size = parseOctal(h, 124, 12, "size");
    const start = off + BLOCK;
    if (start + size > buf.length)
      throw new TarError("truncated", `the archive ends inside ${JSON.stringify(name)}`);
    entries.push({ name, data: Buffer.from(buf.subarray(start, start + size)) });
    off = start + Math.ceil(size / BLOCK) * BLOCK;
  }
}
