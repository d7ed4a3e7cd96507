/** The invoices feature's pure rules: what a service status makes of an invoice's local status. */
import type { InvoiceStatus } from "./schema.js";

/** Local status for a service status (seed §States): Paid → paid; Rejected/Expired/Invalid → unpaid; … */
export function localStatus(remote: string, current: InvoiceStatus): InvoiceStatus {
  switch (remote) {
    case "Paid":
      return "paid";
    case "Canceled":
      return "cancelled";
    case "Rejected":
    case "Expired":
    case "Invalid":
      return "unpaid";
    default:
      // Created, Accepted: still open; an overdue invoice stays overdue until paid.
      return current === "overdue" ? "overdue" : "sent";
  }
}

/** Paid and cancelled: no service status changes them here. */
export const FINAL: ReadonlySet<InvoiceStatus> = new Set(["paid", "cancelled"]);
