/**
 * Company invoices (issue 18), as other features reach them: the companies' set-up (companies/) reads and
 * writes companies, products and unit assignments; reconciliation reads invoice tables.
 */
import type { InvoicesClient } from "../../payment/invoices/client.js";
import type { FleetFeature } from "../feature.js";
import { type InvoicesPluginOptions, registerInvoices } from "./callbacks.js";
import { mountInvoicePages } from "./routes.js";

export type { CompanyRow, InvoicesDatabase, ProductsTable } from "./schema.js";
export {
  assignUnit,
  CompanyInput,
  createCompany,
  invoicesDb,
  loadCompanies,
  ProductInput,
  setProduct,
} from "./store/invoices.js";
export { rate, renderCompanies } from "./views.js";

/**
 * The invoices feature: the service's callbacks when invoices are configured, and the pages (cancel for
 * managers only when they are).
 */
export function invoicesFeature(
  inv: (Pick<InvoicesPluginOptions, "auth"> & { client: InvoicesClient }) | undefined,
): FleetFeature {
  return {
    name: "invoices",
    ...(inv === undefined
      ? {}
      : { register: (app, ctx) => registerInvoices(app, ctx, { auth: inv.auth, client: inv.client }) }),
    pages: (web, ctx, t, p) => mountInvoicePages(web, ctx, { invoices: inv }, t, p),
    nav: [["/invoices", "Invoices"]],
  };
}
