/** What the composed fleet server's optional sections need (see features.ts). */

import type { InvoicesClient } from "../payment/invoices/client.js";
import type { SubscriptionsClient } from "../payment/subscriptions/client.js";
import type { AlertSettings } from "./alerts/settings.js";
import type { CallbackChecks } from "./callbackChecks.js";
import type { FleetConfig } from "./config.js";
import type { PlansSettings } from "./plans/index.js";
import type { ReportingSettings } from "./reconcile/settings.js";

/** What the optional sections need at run time (built from the config by the CLI, or given by tests). */
export interface FleetServices {
  /** Reporting settings (or a loader called at each run) when `reporting` is configured. */
  reporting?: ReportingSettings | (() => ReportingSettings);
  plans?: { client: SubscriptionsClient; settings: PlansSettings };
  invoices?: { client: InvoicesClient; auth: FleetInvoiceAuth };
  /** Alerts (issue 37): evaluated on their schedule when configured; the page is always there. */
  alerts?: AlertSettings;
  /** The bearer token Prometheus scrapes `/metrics` with (issue 45); absent: managers' sessions only. */
  metricsToken?: string;
  /** The services' answers to the fleet's callback addresses (callbackChecks.ts): the dashboard shows refusals. */
  callbacks?: CallbackChecks;
}
export type FleetInvoiceAuth = NonNullable<FleetConfig["invoices"]>["callbackAuth"];
