/**
 * `vendd keys generate [--out-dir DIR] [--passphrase-file FILE] [--kdf sensitive|interactive] [--force]`:
 * a minisign key pair for signing bundles. The secret key is encrypted with a passphrase exactly as
 * `minisign -G` does, so either tool can use the other's keys. The passphrase comes from a file or a
 * prompt, never from the command line (argv is visible to every user of the machine).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { writeFileAtomic } from "../core/atomicFile.js";
import { printable } from "../core/printable.js";
import {
  generateKeys,
  KDF_INTERACTIVE,
  KDF_SENSITIVE,
  keyIdHex,
  parsePublicKey,
  publicKeyLine,
} from "../update/minisign.js";
import { renderCommandUsage } from "./commandTable.js";
import { KEYS_OPTIONS, UPDATE_COMMANDS } from "./updateCommands.js";

const USAGE = `${renderCommandUsage(UPDATE_COMMANDS.filter((c) => c.command === "keys"))}
Writes DIR/vendd.pub and DIR/vendd.key (mode 0600; default DIR: the current directory). The secret key is
encrypted with the passphrase (scrypt, as minisign does: --kdf sensitive, the default, uses 1 GiB and takes
seconds; interactive uses 16 MiB). The passphrase is read from --passphrase-file (first line) or prompted.
Put the printed key line into updates.publicKeys of the units' config.
`;

/** Reads a passphrase: the first line of `file`, else a prompt on the terminal (no echo), else stdin's first line. */
export async function readPassphrase(
  file: string | undefined,
  prompt: string,
  confirm = false,
): Promise<string> {
  if (file !== undefined) {
    const first = readFileSync(file, "utf8").split(/\r?\n/)[0] ?? "";
    if (first === "") throw new Error(`${printable(file)}: the passphrase file's first line is empty`);
    return first;
  }
  const once = await readLine(prompt);
  if (confirm && process.stdin.isTTY) {
    const again = await readLine("Passphrase (again): ");
    if (again !== once) throw new Error("the passphrases differ");
  }
  if (once === "") throw new Error("the passphrase is empty");
  return once;
}

function readLine(prompt: string): Promise<string> {
  const stdin = process.stdin;
  return new Promise((resolve, reject) => {
    let buf = "";
    const tty = stdin.isTTY === true;
    if (tty) {
      process.stderr.write(prompt);
      stdin.setRawMode(true);
    }
    stdin.setEncoding("utf8");
    const finish = (err: Error | null) => {
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      if (tty) {
        stdin.setRawMode(false);
        process.stderr.write("\n");
      }
      stdin.pause();
      if (err === null) resolve(buf);
      else reject(err);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\n" || ch === "\r") return finish(null);
        if (ch === "\u0003") return finish(new Error("interrupted"));
        if (ch === "\u007f") buf = buf.slice(0, -1);
        else buf += ch;
      }
    };
    const onEnd = () => (buf === "" ? finish(new Error("no passphrase on standard input")) : finish(null));
    stdin.on("data", onData);
    stdin.on("end", onEnd);
    stdin.resume();
  });
}

export async function keysCommand(argv: string[]): Promise<number> {
  let values: {
    "out-dir"?: string;
    "passphrase-file"?: string;
    kdf?: string;
    force?: boolean;
    help?: boolean;
  };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: KEYS_OPTIONS,
      allowPositionals: true,
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`vendd keys: ${err instanceof Error ? err.message : "bad arguments"}\n${USAGE}`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== "generate") {
    process.stderr.write(`vendd keys: expected 'generate'\n${USAGE}`);
    return 2;
  }
  const kdf = values.kdf ?? "sensitive";
  if (kdf !== "sensitive" && kdf !== "interactive") {
    process.stderr.write(`vendd keys: --kdf must be sensitive or interactive\n${USAGE}`);
    return 2;
  }
  const dir = values["out-dir"] ?? ".";
  const pubPath = join(dir, "vendd.pub");
  const keyPath = join(dir, "vendd.key");
  if (values.force !== true && (existsSync(pubPath) || existsSync(keyPath))) {
    process.stderr.write(`vendd keys: ${printable(keyPath)} or vendd.pub exists; --force replaces them\n`);
    return 1;
  }
  try {
    const passphrase = await readPassphrase(
      values["passphrase-file"],
      "Passphrase for the new secret key: ",
      true,
    );
    // The key derivation is the long part (1 GiB of scrypt by default): one line first, so a silent
    // terminal is not taken for a hang.
    process.stderr.write(
      `vendd keys: deriving the key from the passphrase (scrypt, ${
        kdf === "sensitive" ? "1 GiB: several seconds, about a minute on a Pi" : "16 MiB: about a second"
      })...\n`,
    );
    const keys = await generateKeys(passphrase, kdf === "sensitive" ? KDF_SENSITIVE : KDF_INTERACTIVE);
    mkdirSync(dir, { recursive: true });
    writeFileAtomic(keyPath, keys.secretKeyText, { mode: 0o600 });
    writeFileAtomic(pubPath, keys.publicKeyText, { mode: 0o644 });
    const line = publicKeyLine(parsePublicKey(keys.publicKeyText));
    process.stdout.write(
      `key id ${keyIdHex(keys.keyId)}\nsecret key: ${printable(keyPath)}\npublic key: ${printable(pubPath)}\n` +
        `updates.publicKeys entry: ${line}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`vendd keys: ${err instanceof Error ? err.message : "failed"}\n`);
    return 1;
  }
}
