/**
 * The fleet's callback addresses at the payment services (issue 43): at start the server tells the
 * subscriptions service (plans) and the invoice service where to call back; a service may refuse the
 * address (not https, a port it does not call, an unreachable host). Each answer is kept in
 * {@link CallbackChecks}, which the dashboard shows on every page while one is refused, and
 * `vendd fleet doctor` makes the same calls and prints them: a refusal is not only a log line.
 * The calls are PUT-like (setting the same address again changes nothing at the service).
 */
import { configureProvider } from "./plans/index.js";
import type { FleetServices } from "./services.js";

export interface CallbackCheck {
  /** Which service: `plans` (subscriptions) or `invoices`. */
  service: "plans" | "invoices";
  /** The address the fleet asked the service to call. */
  url: string;
  /** Null when the service took it; else what it answered (or why it could not be asked). */
  refusal: string | null;
  at: number;
}

/** The last answer of each service, kept for the dashboard. */
export class CallbackChecks {
  private readonly last = new Map<CallbackCheck["service"], CallbackCheck>();

  record(checks: readonly CallbackCheck[]): void {
    for (const c of checks) this.last.set(c.service, c);
  }

  refused(): CallbackCheck[] {
    return [...this.last.values()].filter((c) => c.refusal !== null);
  }
}

const NAMES: Record<CallbackCheck["service"], string> = {
  plans: "the subscriptions service (plans)",
  invoices: "the invoice service",
};

/** A refusal in words, with what to do next. */
export function callbackNotice(c: CallbackCheck): string {
  return `${NAMES[c.service]} refused the callback address ${c.url}: ${c.refusal ?? ""}. Until it takes one, its payment and status updates do not reach the fleet. Set publicUrl in the fleet config to an https address on port 443 that the service reaches, restart the fleet, and check with vendd fleet doctor --config FILE.`;
}

function why(e: unknown): string {
  return e instanceof Error ? e.message.slice(0, 500) : "failed";
}

/** Tells each configured service its callback address; one answer per service. */
export async function registerCallbacks(
  s: FleetServices,
  publicUrl: string | undefined,
  now: () => number,
): Promise<CallbackCheck[]> {
  const out: CallbackCheck[] = [];
  if (s.plans !== undefined) {
    const url = `${s.plans.settings.publicUrl}/plans/callbacks/payments`;
    let refusal: string | null = null;
    try {
      await configureProvider(s.plans.client, s.plans.settings);
    } catch (e) {
      refusal = why(e);
    }
    out.push({ service: "plans", url, refusal, at: now() });
  }
  if (s.invoices !== undefined && publicUrl !== undefined) {
    const url = `${publicUrl.replace(/\/+$/, "")}/invoices/callbacks`;
    const a = s.invoices.auth;
    let refusal: string | null = null;
    try {
      if (a.kind === "basic") await s.invoices.client.setCallbackBasic(url, a.username, a.password);
      else await s.invoices.client.setCallbackApiKey(url, a.key);
    } catch (e) {
      refusal = why(e);
    }
    out.push({ service: "invoices", url, refusal, at: now() });
  }
  return out;
}
