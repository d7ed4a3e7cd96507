/**
 * Sales: the rows the unit API stores per session (ingest/), read per currency and day range for the sales
 * page, its CSV and JSON, and for the units' overview and unit pages (totals, the daily series).
 */
import type { FleetFeature } from "../feature.js";
import { mountSalesPages } from "./routes.js";

export {
  type DailySeries,
  dailySeries,
  type SalesFilter,
  type SalesGroup,
  type SalesRow,
  salesBy,
  type Totals,
  totals,
} from "./store.js";
export { totalsTable } from "./views.js";

export const salesFeature: FleetFeature = {
  name: "sales",
  pages: (web, ctx, t) => mountSalesPages(web, ctx, t),
};
