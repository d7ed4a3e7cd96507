/**
 * `vendd fleet doctor --config FILE` (issue 43): what the fleet server does at start with the payment
 * services, done now and printed: each configured service (plans: subscriptions; invoices) is told the
 * fleet's callback address, and whether it took it or what it answered. Exit 0 when every service took it,
 * 1 when one refused or could not be reached, 2 for a usage or config error. No secret is printed.
 */
import { systemClock } from "../core/clock.js";
import { printable } from "../core/printable.js";
import { callbackNotice, registerCallbacks } from "../fleet/callbackChecks.js";
import { FleetConfigError, problemsMessage, readFleetConfig } from "../fleet/config.js";
import { FleetUsageError, fleetCommandUsage, parseFleetArgs } from "./fleetOptions.js";
import { servicesOf } from "./fleetServe.js";

export async function fleetDoctorCommand(argv: string[]): Promise<number> {
  let config: string;
  try {
    const args = parseFleetArgs(argv);
    if (args.help) {
      process.stdout.write(fleetCommandUsage("doctor"));
      return 0;
    }
    if (args.positionals.length > 0)
      throw new FleetUsageError(`unexpected ${printable(args.positionals.join(" "), 64)}`);
    if (args.config === undefined) throw new FleetUsageError("--config FILE: the fleet config to check");
    config = args.config;
  } catch (err) {
    if (!(err instanceof FleetUsageError)) throw err;
    process.stderr.write(`vendd fleet doctor: ${err.message}\n${fleetCommandUsage("doctor")}`);
    return 2;
  }
  let read: ReturnType<typeof readFleetConfig>;
  try {
    read = readFleetConfig(config);
  } catch (err) {
    if (!(err instanceof FleetConfigError)) throw err;
    process.stderr.write(`vendd fleet doctor: ${err.message}\n`);
    return 2;
  }
  const problems = [...read.problems];
  const services = await servicesOf(read.cfg, problems);
  if (problems.length > 0) {
    process.stderr.write(`vendd fleet doctor: ${problemsMessage(read.cfg.path ?? config, problems)}\n`);
    return 2;
  }
  const checks = await registerCallbacks(services, read.cfg.publicUrl, () => systemClock.now());
  if (checks.length === 0) {
    process.stdout.write("callbacks: no plans or invoices configured: nothing to check\n");
    return 0;
  }
  for (const c of checks)
    process.stdout.write(
      c.refusal === null
        ? `ok       ${c.service} callback ${c.url}: the service took it\n`
        : `REFUSED  ${c.service} callback: ${callbackNotice(c)}\n`,
    );
  return checks.every((c) => c.refusal === null) ? 0 : 1;
}
