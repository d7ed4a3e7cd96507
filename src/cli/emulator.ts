import { readFile } from "node:fs/promises";
import { printable } from "../core/printable.js";
import {
  type EmulatorInfo,
  type EmulatorOptions,
  parseSeedFile,
  type SeedFile,
  startEmulator,
} from "../emulator/index.js";
import {
  type DeprecatedTlsFiles,
  makeDeprecatedTlsFiles,
  readDeprecatedTls,
} from "../emulator/subscriptions/certs.js";
import { renderCommandUsage } from "./commandTable.js";
import { SIMULATION_COMMANDS } from "./simCommands.js";

const USAGE = `${renderCommandUsage(SIMULATION_COMMANDS.filter((c) => c.command === "emulator"))}
Runs the payment-service emulator (V10 and the older interface) until SIGINT or SIGTERM.
  --port N            TCP port (default 0: a free one)
  --host H            listen address (default 127.0.0.1)
  --json              print exactly one JSON line with the endpoints and the seeded test credentials
  --seed FILE         JSON file adding integrators, merchants, stores, users, callback aliases; with an
                      integrator and a store with its storeId (and a fixed --port) the unit config lines
                      it prints are the same at every start
  --poll-delay-ms N   pollDelayInMs of payments and check-in (default 1000; test affordance, min 10)
  --deprecated-tls DIR
                      also start the deprecated subscriptions interface's mutual-TLS listener, with a
                      throw-away CA, server and client certificate made (openssl) into DIR
`;

interface Args {
  options: EmulatorOptions;
  json: boolean;
  seedFile: string | null;
  /** Where to make the deprecated interface's certificates (null: its listener is not started). */
  tlsDir: string | null;
}

/** Reads the arguments (the options of EMULATOR_OPTIONS in simCommands.ts); a usage error as a string. */
export function parseArgs(argv: string[]): Args | string {
  const args: Args = { options: {}, json: false, seedFile: null, tlsDir: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    const int = (): number | null => (value !== undefined && /^\d+$/.test(value) ? Number(value) : null);
    switch (flag) {
      case "--json":
        args.json = true;
        continue;
      case "--port": {
        const n = int();
        if (n === null || n > 65535) return "--port needs a number 0-65535";
        args.options.port = n;
        break;
      }
      case "--host":
        if (value === undefined) return "--host needs an address";
        args.options.host = value;
        break;
      case "--seed":
        if (value === undefined) return "--seed needs a file";
        args.seedFile = value;
        break;
      case "--deprecated-tls":
        if (value === undefined || value.startsWith("--")) return "--deprecated-tls needs a directory";
        args.tlsDir = value;
        break;
      case "--poll-delay-ms": {
        const n = int();
        if (n === null) return "--poll-delay-ms needs a number";
        args.options.pollDelayMs = n;
        break;
      }
      default:
        return `unknown option ${flag}`;
    }
    i += 1;
  }
  return args;
}

/**
 * The lines a bench unit's config and secrets need to use this emulator's V10 interface. With a seed that
 * names an integrator and a store with its storeId (and a fixed --port), they are the same at every start,
 * so a unit's config outlives an emulator restart; otherwise the emulator's own, new at each start.
 */
export function unitConfigLines(info: EmulatorInfo, seed: SeedFile | undefined): string[] {
  const integrator = seed?.integrators?.[0];
  const merchant = seed?.merchants?.find((m) => m.stores?.some((st) => st.storeId !== undefined));
  const store = merchant?.stores?.find((st) => st.storeId !== undefined);
  const clientId = integrator?.clientId ?? info.v10.clientId;
  const clientSecret = integrator?.clientSecret ?? info.v10.clientSecret;
  return [
    "  a bench unit: in /etc/vendd/config.yaml",
    "    payment:",
    "      driver: v10",
    "      v10:",
    `        baseUrl: ${info.v10.baseUrl}`,
    `        tokenUrl: ${info.v10.tokenUrl}`,
    `        clientId: ${clientId}`,
    `        merchantVat: "${merchant?.vat ?? info.v10.merchantVat}"`,
    `        storeId: ${store?.storeId ?? info.v10.storeId}`,
    "  and in /etc/vendd/secrets.yaml",
    `    v10: { clientSecret: ${clientSecret} }`,
    integrator !== undefined && store !== undefined
      ? "  (from the seed: the same at every start on this --port)"
      : "  (new at each start: --seed FILE with an integrator and a store with its storeId keeps them; docs/technicians.md)",
  ];
}

function summary(info: EmulatorInfo, files: DeprecatedTlsFiles | null, seed?: SeedFile): string {
  const lines = [
    `payment-service emulator on port ${info.port}`,
    `  admin API      ${info.admin}`,
    `  V10 base URL   ${info.v10.baseUrl}`,
    `  token URL      ${info.v10.tokenUrl}`,
    `  clientId       ${info.v10.clientId}`,
    `  clientSecret   ${info.v10.clientSecret}`,
    `  merchant VAT   ${info.v10.merchantVat}   store ${info.v10.storeId}   brand ${info.v10.merchantBrandId}   location ${info.v10.merchantLocationId}`,
    `  older interface: merchantId ${info.legacy.merchantId} locationId ${info.legacy.locationId}`,
    `    apiKey ${info.legacy.apiKey}  merchantKey ${info.legacy.merchantKey}`,
    `  subscriptions: token URL ${info.subscriptions.tokenUrl}  providerId ${info.subscriptions.providerId}`,
    `    clientId ${info.subscriptions.clientId}  clientSecret ${info.subscriptions.clientSecret}`,
    `  invoices: merchantId ${info.invoices.merchantId}  bearer ${info.invoices.accessToken}`,
    ...info.invoices.issuers.map((i) => `    issuer ${i.id} (${i.status})`),
    `  online payments: x-gateway-client-id ${info.online.clientId}  secret ${info.online.clientSecret}  publicKeyId ${info.online.publicKeyId}`,
    "  app users:",
    ...info.users.map((u) => `    ${u.phone.padEnd(15)} ${u.features.join(", ")}`),
    ...deprecatedLines(info, files),
    ...unitConfigLines(info, seed),
    "(test credentials of this emulator instance; Ctrl-C stops it)",
  ];
  return `${lines.join("\n")}\n`;
}

function deprecatedLines(info: EmulatorInfo, files: DeprecatedTlsFiles | null): string[] {
  const d = info.subscriptions.deprecated;
  if (files === null || d.baseUrl === null) return [];
  return [
    `  deprecated subscriptions (mutual TLS): ${d.baseUrl}`,
    `    x-gateway-client-id ${d.gatewayClientId}  x-gateway-client-secret ${d.gatewayClientSecret}`,
    `    curl --cacert ${files.ca} --cert ${files.clientCert} --key ${files.clientKey} …`,
  ];
}

/** The `--json` line: the emulator's info, with the certificate paths beside the deprecated base URL. */
function jsonLine(info: EmulatorInfo, files: DeprecatedTlsFiles | null): string {
  if (files === null) return `${JSON.stringify(info)}\n`;
  const deprecated = { ...info.subscriptions.deprecated, certificates: files };
  return `${JSON.stringify({ ...info, subscriptions: { ...info.subscriptions, deprecated } })}\n`;
}

/** The command's input and output, injected so that tests can drive it. */
export interface EmulatorCliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Resolves when the emulator should stop (SIGINT/SIGTERM for the real command). */
  stopped(): Promise<void>;
}

/** Runs the command with the given I/O; returns the exit code. */
export async function runEmulatorCli(argv: string[], io: EmulatorCliIo): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    io.stdout(USAGE);
    return 0;
  }
  const args = parseArgs(argv);
  if (typeof args === "string") {
    io.stderr(`vendd emulator: ${args}\n${USAGE}`);
    return 2;
  }
  if (args.seedFile !== null) {
    const seedFile = args.seedFile;
    try {
      const text = await readFile(seedFile, "utf8");
      args.options.seed = parseSeedFile(JSON.parse(text) as unknown);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A file system error (ENOENT, EACCES) says it cannot be read; a JSON or seed error says what is wrong.
      const why =
        code !== undefined && /^E[A-Z]+$/.test(code) ? `cannot be read (${code})` : (err as Error).message;
      io.stderr(
        `vendd emulator: --seed ${printable(seedFile, 200)}: ${printable(why, 300)}; give a readable JSON seed file\n`,
      );
      return 1;
    }
  }
  let files: DeprecatedTlsFiles | null = null;
  if (args.tlsDir !== null) {
    try {
      files = await makeDeprecatedTlsFiles(args.tlsDir, args.options.host ?? "127.0.0.1");
    } catch (e: unknown) {
      io.stderr(
        `vendd emulator: --deprecated-tls ${printable(args.tlsDir, 200)}: ${printable(e instanceof Error ? e.message : String(e), 300)}\n`,
      );
      return 1;
    }
    args.options.subscriptions = { deprecatedTls: await readDeprecatedTls(files) };
  }
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  try {
    emulator = await startEmulator(args.options);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const at = `${args.options.host ?? "127.0.0.1"}:${args.options.port ?? 0}`;
    io.stderr(
      code === "EADDRINUSE"
        ? `vendd emulator: cannot listen on ${at}: another process uses that port; stop it or choose another --port\n`
        : `vendd emulator: could not start on ${at}: ${printable((err as Error).message, 300)} (--host, --port)\n`,
    );
    return 1;
  }
  io.stdout(args.json ? jsonLine(emulator.info, files) : summary(emulator.info, files, args.options.seed));
  await io.stopped();
  await emulator.close();
  return 0;
}

/** `vendd emulator`: runs the emulator until SIGINT/SIGTERM; prints its endpoints and test credentials. */
export function emulatorCommand(argv: string[]): Promise<number> {
  return runEmulatorCli(argv, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stopped: () =>
      new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          resolve();
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
      }),
  });
}
