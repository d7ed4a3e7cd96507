import { execFile } from "node:child_process";
import { chmod, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Paths of the throw-away PKI of the deprecated interface's mutual-TLS listener (all PEM). */
export interface DeprecatedTlsFiles {
  dir: string;
  /** The CA that signed both certificates: the client's trust anchor (`curl --cacert`). */
  ca: string;
  serverCert: string;
  serverKey: string;
  /** The merchant's client certificate and key (`curl --cert … --key …`). */
  clientCert: string;
  clientKey: string;
}

/** The files' PEM text, as the listener takes them. */
export interface DeprecatedTlsPem {
  cert: string;
  key: string;
  /** Trust anchors of client certificates: the throw-away CA. */
  clientCerts: string[];
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run("openssl", args, { timeout: 30_000 });
  } catch (e: unknown) {
    const code = (e as { code?: unknown }).code;
    if (code === "ENOENT")
      throw new Error(
        "the openssl command is needed to make the certificates: install openssl (apt-get install openssl)",
      );
    const stderr = String((e as { stderr?: unknown }).stderr ?? "").trim();
    throw new Error(`openssl ${args[0]} failed: ${stderr.split("\n").at(-1) ?? String(e)}`);
  }
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** Makes a key and a certificate signed by the CA in `dir`, with the given X.509 v3 extensions. */
async function signed(dir: string, name: string, subject: string, extensions: string): Promise<void> {
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  await openssl([
    "req",
    "-new",
    ...EC,
    "-keyout",
    join(dir, `${name}-key.pem`),
    "-out",
    csr,
    "-subj",
    subject,
  ]);
  await writeFile(ext, extensions, { mode: 0o600 });
  await openssl([
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    join(dir, "ca.pem"),
    "-CAkey",
    join(dir, "ca-key.pem"),
    "-set_serial",
    `0x${Date.now().toString(16)}${name === "server" ? "01" : "02"}`,
    "-days",
    "7",
    "-extfile",
    ext,
    "-out",
    join(dir, `${name}.pem`),
  ]);
  await rm(csr, { force: true });
  await rm(ext, { force: true });
}

/**
 * Makes a throw-away PKI in `dir` (created 0700 when absent; files 0600, existing ones replaced) with the
 * openssl command: an EC P-256 CA, a server certificate for `host` (plus 127.0.0.1, ::1 and localhost) and
 * a client certificate, valid 7 days. Test material of a test tool: never use it for anything else.
 */
export async function makeDeprecatedTlsFiles(dir: string, host: string): Promise<DeprecatedTlsFiles> {
  const root = resolve(dir);
  const existing = await stat(root).catch(() => null);
  if (existing !== null && !existing.isDirectory())
    throw new Error(`${root} is not a directory: name a new or an existing directory`);
  await mkdir(root, { recursive: true, mode: 0o700 });
  const files: DeprecatedTlsFiles = {
    dir: root,
    ca: join(root, "ca.pem"),
    serverCert: join(root, "server.pem"),
    serverKey: join(root, "server-key.pem"),
    clientCert: join(root, "client.pem"),
    clientKey: join(root, "client-key.pem"),
  };
  await openssl([
    "req",
    "-x509",
    ...EC,
    "-keyout",
    join(root, "ca-key.pem"),
    "-out",
    files.ca,
    "-days",
    "7",
    "-subj",
    "/CN=vendd emulator throw-away CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  const names = new Set([
    "IP:127.0.0.1",
    "IP:::1",
    "DNS:localhost",
    isIP(host) ? `IP:${host}` : `DNS:${host}`,
  ]);
  await signed(
    root,
    "server",
    `/CN=${isIP(host) ? host : host.replace(/[^A-Za-z0-9.-]/g, "")}`,
    `basicConstraints=CA:FALSE\nsubjectAltName=${[...names].join(",")}\nextendedKeyUsage=serverAuth\n`,
  );
  await signed(
    root,
    "client",
    "/CN=vendd emulator merchant",
    "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
  );
  for (const name of ["ca.pem", "ca-key.pem", "server.pem", "server-key.pem", "client.pem", "client-key.pem"])
    await chmod(join(root, name), 0o600);
  return files;
}

/** Reads the listener's certificate, key and client trust anchor from the files. */
export async function readDeprecatedTls(files: DeprecatedTlsFiles): Promise<DeprecatedTlsPem> {
  const [cert, key, ca] = await Promise.all([
    readFile(files.serverCert, "utf8"),
    readFile(files.serverKey, "utf8"),
    readFile(files.ca, "utf8"),
  ]);
  return { cert, key, clientCerts: [ca] };
}
