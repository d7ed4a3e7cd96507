/**
 * `vendd fleet invoice preview|run --config FILE --company ID --month YYYY-MM` (issue 43): one company's
 * invoice of a finished month, as the dashboard's "run now" does it. `preview` prints the invoice the
 * monthly run would make (articles, totals; nothing stored or sent); `run` makes and sends it with the
 * monthly run's code (src/fleet/invoices/cycle.ts), for that company only. Exit 0 done, 1 refused or
 * failed, 2 usage or config error. No secret is printed.
 */
import { systemClock } from "../core/clock.js";
import { createLogger } from "../core/log.js";
import { formatAmount } from "../core/money.js";
import { printable } from "../core/printable.js";
import { FleetConfigError, problemsMessage, readFleetConfig } from "../fleet/config.js";
import type { FleetContext } from "../fleet/context.js";
import { openFleetDb } from "../fleet/database.js";
import { previewInvoice, runInvoiceCycle } from "../fleet/invoices/cycle.js";
import { rate } from "../fleet/invoices/views.js";
import { parseOptionsOrExit } from "./cliArgs.js";
import { renderCommandUsage } from "./commandTable.js";
import { FLEET_COMMANDS, FLEET_INVOICE_OPTIONS } from "./fleetCommands.js";
import { servicesOf } from "./fleetServe.js";
import { formatColumns } from "./table.js";

const HELP = `${renderCommandUsage(FLEET_COMMANDS.filter((c) => c.words.startsWith("fleet invoice")))}
One company's invoice of a finished month (docs/invoices.md): preview prints it as the monthly run would
make it, nothing stored or sent; run makes and sends it (once: a second run makes no second invoice).
`;

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export async function fleetInvoiceCommand(argv: string[]): Promise<number> {
  const io = { stdout: process.stdout, stderr: process.stderr, env: process.env };
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h") {
    process.stdout.write(HELP);
    return 0;
  }
  if (sub !== "preview" && sub !== "run") {
    process.stderr.write(
      `vendd fleet invoice: preview or run, not ${printable(sub ?? "nothing", 32)}\n${HELP}`,
    );
    return 2;
  }
  const name = `fleet invoice ${sub}`;
  const v = parseOptionsOrExit(name, rest, FLEET_INVOICE_OPTIONS, HELP, io);
  if (typeof v === "number") return v;
  if (v.config === undefined || v.company === undefined || v.month === undefined || !MONTH.test(v.month)) {
    process.stderr.write(
      `vendd ${name}: --config FILE, --company ID and --month YYYY-MM are needed\n${HELP}`,
    );
    return 2;
  }
  let read: ReturnType<typeof readFleetConfig>;
  try {
    read = readFleetConfig(v.config);
  } catch (e) {
    if (!(e instanceof FleetConfigError)) throw e;
    process.stderr.write(`vendd ${name}: ${e.message}\n`);
    return 2;
  }
  const problems = [...read.problems];
  const services = sub === "run" ? await servicesOf(read.cfg, problems) : {};
  if (problems.length > 0) {
    process.stderr.write(`vendd ${name}: ${problemsMessage(read.cfg.path ?? v.config, problems)}\n`);
    return 2;
  }
  if (sub === "run" && services.invoices === undefined) {
    process.stderr.write(`vendd ${name}: the fleet config has no invoices section: nothing can be sent\n`);
    return 2;
  }
  let fdb: Awaited<ReturnType<typeof openFleetDb>>;
  try {
    fdb = await openFleetDb(process.env.VENDD_FLEET_DB || read.cfg.db || "fleet.db", { create: false });
  } catch (e) {
    process.stderr.write(`vendd ${name}: ${(e as Error).message}\n`);
    return 1;
  }
  const ctx: FleetContext = {
    db: fdb.db,
    dialect: fdb.dialect,
    clock: systemClock,
    logger: createLogger({ level: "silent" }),
    timeZone: read.cfg.timeZone ?? "UTC",
  };
  try {
    return sub === "preview"
      ? await preview(ctx, v.company, v.month, v.json === true)
      : await run(ctx, services, v.company, v.month);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    process.stderr.write(`vendd ${name}: ${e.message}: only a finished month is invoiced\n`);
    return 1;
  } finally {
    await fdb.close();
  }
}

async function preview(ctx: FleetContext, company: string, month: string, json: boolean): Promise<number> {
  const p = await previewInvoice(ctx, company, month, ctx.clock.now());
  if (p === undefined) {
    process.stderr.write(`vendd fleet invoice preview: no company ${printable(company, 64)}\n`);
    return 1;
  }
  if (json) {
    process.stdout.write(`${JSON.stringify(p, null, 2)}\n`);
    return p.bill.kind === "error" ? 1 : 0;
  }
  const head = `${printable(p.companyName, 200)} ${p.month}`;
  if (p.existing !== null) {
    process.stdout.write(
      `${head}: invoice ${p.existing.number} exists already (${p.existing.status}); a run makes no second one\n`,
    );
    return 0;
  }
  if (p.bill.kind === "empty") {
    process.stdout.write(`${head}: nothing to bill\n`);
    return 0;
  }
  if (p.bill.kind === "error") {
    process.stdout.write(`${head}: the invoice cannot be made: ${p.bill.reason}\n`);
    return 1;
  }
  const b = p.bill.built;
  process.stdout.write(
    `${head}: preview (nothing stored or sent), issued ${p.issueDate}, due ${p.dueDate}, ${p.currency}\n${formatColumns(
      ["ARTICLE", "DESCRIPTION", "QTY", "UNIT PRICE", "VAT", "NET", "VAT AMOUNT", "TOTAL"],
      b.articles.map((a) => [
        printable(a.articleNumber, 20),
        printable(a.description, 80),
        String(a.quantity),
        formatAmount(a.unitPrice),
        rate(a.vatBp),
        formatAmount(a.net),
        formatAmount(a.vat),
        formatAmount(a.gross),
      ]),
      { flex: 1, right: [2, 3, 4, 5, 6, 7], width: 120 },
    )}total ${formatAmount(b.total)} ${p.currency} (net ${formatAmount(b.netTotal)}, VAT ${formatAmount(b.vatTotal)})\n`,
  );
  return 0;
}

async function run(
  ctx: FleetContext,
  services: Awaited<ReturnType<typeof servicesOf>>,
  company: string,
  month: string,
): Promise<number> {
  const client = services.invoices?.client;
  if (client === undefined) return 2;
  const r = await runInvoiceCycle(ctx, client, month, ctx.clock.now(), { companyId: company });
  for (const c of r.created)
    process.stdout.write(`invoice ${c.number} made for ${month}: ${formatAmount(c.total)}\n`);
  for (const s of r.sent) process.stdout.write(`invoice ${s.number} sent (the service's id ${s.remoteId})\n`);
  for (const e of r.buildErrors) process.stdout.write(`not made: ${e.reason}\n`);
  for (const e of r.sendErrors) process.stdout.write(`not sent: ${e.reason}\n`);
  if (
    r.created.length === 0 &&
    r.sent.length === 0 &&
    r.buildErrors.length === 0 &&
    r.sendErrors.length === 0
  )
    process.stdout.write(
      r.empty.includes(company)
        ? `nothing to bill for ${month}\n`
        : `nothing to do: the invoice of ${month} exists\n`,
    );
  return r.buildErrors.length + r.sendErrors.length === 0 ? 0 : 1;
}
