/** What the Companies page's forms show besides the companies: store.ts reads it, views.ts renders it. */

import type { ProductsTable } from "../invoices/index.js";
import type { PlansTable } from "../plans/index.js";

/** What the forms need besides the companies: units to choose from, catalogues, plans (when configured). */
export interface CompanyFormData {
  units: { id: string; label: string; status: string }[];
  products: ProductsTable[];
  members: { id: string; name: string; company_id: string; plan: string; status: string }[];
  /** Null when plans are not configured: no member form then. */
  plans: PlansTable[] | null;
}
