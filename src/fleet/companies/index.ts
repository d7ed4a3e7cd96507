/** Companies (issue 18), as the composition mounts them: the managers' set-up page and forms. */
import type { FleetFeature } from "../feature.js";
import type { PlansOptions } from "../plans/index.js";
import { mountCompanyPages } from "./routes.js";

/** The companies feature; its member form needs the plans service when plans are configured. */
export function companiesFeature(plans: PlansOptions | undefined): FleetFeature {
  return {
    name: "companies",
    pages: (web, ctx, t, p) => mountCompanyPages(web, ctx, { plans }, t, p),
    nav: [["/companies", "Companies"]],
  };
}
