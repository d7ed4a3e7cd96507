/**
 * The dashboard's plan form (issue 43): a manager creates a plan or edits one on /plans. The form's fields
 * are read here as typed (so a refused form comes back with what was typed) and turned into the plans
 * service's PlanInput (amounts through core/money.ts); a refusal is a {@link PlanFormError} naming the field
 * and what it takes, shown on the page, and nothing is written. views.ts-style HTML, escaped by web/html.ts.
 */
import { formatAmount, MoneyFormatError, parseAmount } from "../../core/money.js";
import { type Html, html } from "../web/html.js";
import type { PlanInput } from "./agreements.js";
import type { PlansTable } from "./schema.js";

/** A form refused: the message names the field and what it takes. */
export class PlanFormError extends Error {
  override readonly name = "PlanFormError";
}

/** The form's fields as typed. */
export interface PlanFormValues {
  name: string;
  price: string;
  currency: string;
  dayItems: string;
  dayAmount: string;
  monthItems: string;
  monthAmount: string;
  units: string;
}

const FIELDS: readonly (keyof PlanFormValues)[] = [
  "name",
  "price",
  "currency",
  "dayItems",
  "dayAmount",
  "monthItems",
  "monthAmount",
  "units",
];

/** The highest monthly fee or allowance amount a plan takes (minor units: 60 000.00). */
const MAX_AMOUNT = 6_000_000;

/** The typed fields of a posted form (missing ones empty). */
export function planFormValues(body: unknown): PlanFormValues {
  const b = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  const v = (k: string): string => {
    const x = b[k];
    return typeof x === "string" ? x.trim().slice(0, 20_000) : "";
  };
  const out = {} as PlanFormValues;
  for (const k of FIELDS) out[k] = v(k);
  return out;
}

/** A plan's stored values as the form shows them. */
export function planFormValuesOf(p: PlansTable): PlanFormValues {
  const amount = (n: number | null) => (n === null ? "" : formatAmount(n));
  return {
    name: p.name,
    price: formatAmount(p.price),
    currency: p.currency,
    dayItems: p.day_items === null ? "" : String(p.day_items),
    dayAmount: amount(p.day_amount),
    monthItems: p.month_items === null ? "" : String(p.month_items),
    monthAmount: amount(p.month_amount),
    units: (JSON.parse(p.units) as string[]).join(", "),
  };
}

function amountOf(typed: string, label: string, optional: boolean): number | null {
  if (typed === "" && optional) return null;
  let n: number;
  try {
    n = parseAmount(typed);
  } catch (e) {
    if (!(e instanceof MoneyFormatError)) throw e;
    throw new PlanFormError(
      `${label}: an amount such as 99.00${optional ? " (empty: no limit)" : ""}, not "${typed.slice(0, 40)}"`,
    );
  }
  if (n < 0 || n > MAX_AMOUNT) throw new PlanFormError(`${label}: 0.00 to ${formatAmount(MAX_AMOUNT)}`);
  return n;
}

function countOf(typed: string, label: string): number | null {
  if (typed === "") return null;
  if (!/^\d{1,6}$/.test(typed))
    throw new PlanFormError(
      `${label}: a whole number of items (empty: no limit), not "${typed.slice(0, 40)}"`,
    );
  return Number(typed);
}

/** The plans service's input from the typed fields; throws PlanFormError naming the first wrong field. */
export function planInputOf(v: PlanFormValues): PlanInput {
  if (v.name === "" || v.name.length > 30) throw new PlanFormError("name: 1 to 30 characters");
  const price = amountOf(v.price, "monthly fee", false) ?? 0;
  const currency = v.currency === "" ? "DKK" : v.currency;
  if (currency !== "DKK" && currency !== "EUR") throw new PlanFormError("currency: DKK or EUR");
  const units = v.units.split(/[\s,]+/).filter((u) => u !== "");
  const bad = units.find((u) => u.length > 64 || !/^[\x21-\x7e]+$/.test(u));
  if (bad !== undefined || units.length > 10_000)
    throw new PlanFormError("valid at: unit ids separated by commas or spaces, or * for every unit");
  return {
    name: v.name,
    price,
    currency,
    dayItems: countOf(v.dayItems, "items per day"),
    dayAmount: amountOf(v.dayAmount, "amount per day", true),
    monthItems: countOf(v.monthItems, "items per month"),
    monthAmount: amountOf(v.monthAmount, "amount per month", true),
    units: units.length === 0 || units.includes("*") ? ["*"] : units,
  };
}

/**
 * The plan form: `action` is where it posts, `v` what it shows, `error` a refusal to show above it. On an
 * edit the currency stays (members' charges are in it).
 */
export function planForm(
  f: { action: string; csrf: string; heading: string; submit: string; editing: boolean },
  v: PlanFormValues,
  error: string | null,
): Html {
  const currency = f.editing
    ? html`<label>Currency <input name="currency" value="${v.currency}" readonly></label>`
    : html`<label>Currency <select name="currency"><option${v.currency === "EUR" ? "" : " selected"}>DKK</option><option${v.currency === "EUR" ? " selected" : ""}>EUR</option></select></label>`;
  return html`<section class="plan-form"><h2>${f.heading}</h2>
${error === null ? "" : html`<p class="error" role="alert">${error}</p>`}
<form method="post" action="${f.action}">
<input type="hidden" name="_csrf" value="${f.csrf}">
<label>Name <input name="name" value="${v.name}" required maxlength="30"></label>
<label>Monthly fee <input name="price" value="${v.price}" required inputmode="decimal" placeholder="99.00"></label>
${currency}
<label>Items per day <input name="dayItems" value="${v.dayItems}" inputmode="numeric" placeholder="no limit"></label>
<label>Amount per day <input name="dayAmount" value="${v.dayAmount}" inputmode="decimal" placeholder="no limit"></label>
<label>Items per month <input name="monthItems" value="${v.monthItems}" inputmode="numeric" placeholder="no limit"></label>
<label>Amount per month <input name="monthAmount" value="${v.monthAmount}" inputmode="decimal" placeholder="no limit"></label>
<label>Valid at (unit ids, or * for every unit) <input name="units" value="${v.units}" placeholder="*"></label>
<button type="submit">${f.submit}</button></form></section>`;
}

/** An empty form for a new plan. */
export const NEW_PLAN: PlanFormValues = {
  name: "",
  price: "",
  currency: "DKK",
  dayItems: "",
  dayAmount: "",
  monthItems: "",
  monthAmount: "",
  units: "*",
};
