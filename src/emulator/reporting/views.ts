import { decimal, decimalText, isoSeconds, type Transfer, type Tx, txId } from "./model.js";

/** The v2 element order (seed 002 "transfer contents v2"); also the CSV columns after the top-level ones. */
const V2_FIELDS = [
  "type",
  "amount",
  "currencyCode",
  "timestamp",
  "message",
  "merchantReference",
  "merchantPaymentLabel",
  "paymentTransactionId",
  "userIndicator",
  "loyaltyId",
  "myshopNumber",
  "brandName",
  "brandId",
  "locationId",
  "posName",
  "beaconId",
  "merchantPayerReference",
  "agreementId",
] as const;

/** A transfer contents v2 element: the fields the ledger knows, null for the rest (allowed by the seed). */
export function txViewV2(t: Tx): Record<(typeof V2_FIELDS)[number], string | number | null> {
  return {
    type: t.type,
    amount: decimal(t.amount),
    currencyCode: t.currency,
    timestamp: isoSeconds(t.at),
    message: null,
    merchantReference: t.externalTransactionId === "" ? null : t.externalTransactionId,
    merchantPaymentLabel: null,
    paymentTransactionId: txId(t),
    userIndicator: null,
    loyaltyId: null,
    myshopNumber: null,
    brandName: null,
    brandId: null,
    locationId: null,
    posName: null,
    beaconId: null,
    merchantPayerReference: null,
    agreementId: null,
  };
}

/** The top level of transfer contents v2. */
export function transferHeadV2(transfer: Transfer): Record<string, string> {
  const p = transfer.point;
  return {
    companyRegNo: p.merchant.companyRegNo,
    merchantName: p.merchant.merchantName,
    paymentPointId: p.paymentPointId,
    paymentPointName: p.paymentPointName,
    transferReference: transfer.transferReference,
    transferReferenceDate: transfer.transferReferenceDate,
    receiverAccount: p.merchant.receiverAccount,
  };
}

function csvCell(value: string | number | null): string {
  if (value === null) return "";
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * Transfer contents v2 as CSV (RFC 4180: comma, CRLF, header row): the top-level fields repeated on every row,
 * then the element fields in the seed's order; amounts with two decimals, nulls as empty cells.
 */
export function transferCsv(transfer: Transfer, page: readonly Tx[]): string {
  const head = transferHeadV2(transfer);
  const headNames = Object.keys(head);
  const lines = [[...headNames, ...V2_FIELDS].join(",")];
  const headCells = Object.values(head).map(csvCell);
  for (const t of page) {
    const v = txViewV2(t);
    const cells = V2_FIELDS.map((f) => (f === "amount" ? decimalText(t.amount) : csvCell(v[f])));
    lines.push([...headCells, ...cells].join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}

const q = JSON.stringify;

/**
 * A time-range list element (`transfer` true) or a transfer contents v1 element as JSON text, built directly:
 * a page of 1000 lines is serialised without 1000 intermediate objects (seed 002 "Transaction elements").
 */
export function txJson(t: Tx, transfer: boolean): string {
  let s = `{"type":"${t.type}","amount":${decimal(t.amount)},"currencyCode":${q(t.currency)},"timestamp":"${isoSeconds(t.at)}","paymentTransactionId":"${txId(t)}"`;
  if (t.externalTransactionId !== null && t.externalTransactionId !== "")
    s += `,"externalTransactionId":${q(t.externalTransactionId)}`;
  if (transfer) {
    const tr = t.transfer;
    s +=
      tr === null
        ? ',"transferReference":null,"transferReferenceDate":null'
        : `,"transferReference":${q(tr.transferReference)},"transferReferenceDate":"${tr.transferReferenceDate}"`;
  }
  return `${s}}`;
}

/** A transfer contents v2 element as JSON text (same fields and order as `txViewV2`). */
export function txJsonV2(t: Tx): string {
  const ref =
    t.externalTransactionId === null || t.externalTransactionId === "" ? "null" : q(t.externalTransactionId);
  return `{"type":"${t.type}","amount":${decimal(t.amount)},"currencyCode":${q(t.currency)},"timestamp":"${isoSeconds(t.at)}","message":null,"merchantReference":${ref},"merchantPaymentLabel":null,"paymentTransactionId":"${txId(t)}","userIndicator":null,"loyaltyId":null,"myshopNumber":null,"brandName":null,"brandId":null,"locationId":null,"posName":null,"beaconId":null,"merchantPayerReference":null,"agreementId":null}`;
}

/** A page as JSON text: the top-level fields, the elements (already JSON) and nextPageToken. */
export function pageJson(head: Record<string, string>, elements: string[], next: string | null): string {
  const top = q(head);
  return `${top.slice(0, -1)},"transactions":[${elements.join(",")}],"nextPageToken":${q(next)}}`;
}
