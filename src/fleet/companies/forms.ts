/**
 * Manager forms on `/companies` (issue 18): create a company, make it the payer of a unit, set or replace a
 * catalogue product, add a company-paid member. Form bodies are parsed here (zod, amounts through
 * core/money.ts, the VAT rate as a percentage with up to 2 decimals → basis points) into the inputs of
 * the invoices store and the plans service; a refusal is a {@link FormError} whose message the page shows
 * (422), and nothing is written. The forms' HTML is views.ts, their queries store.ts.
 */

import { z } from "zod";
import { MoneyFormatError, parseAmount } from "../../core/money.js";
import type { FleetContext } from "../context.js";
import { assignUnit, CompanyInput, createCompany, ProductInput, setProduct } from "../invoices/index.js";
import { addCompanyMember, PlansError } from "../plans/index.js";
import { companyCatalogue, unitStatus } from "./store.js";

/** A form refused: the message is shown on the page (it never holds a card UID). */
export class FormError extends Error {
  override readonly name = "FormError";
  constructor(
    message: string,
    readonly status = 422,
  ) {
    super(message);
  }
}

const field = z.string().trim();

const CompanyForm = z.object({
  name: field,
  orgNumber: field,
  delivery: field,
  phone: field.default(""),
  issuerId: field,
  country: field.default("DK"),
  dueDays: field.default("14"),
  catalogue: field.default(""),
});

const UnitForm = z.object({ unit: field.min(1, "choose a unit") });

const ProductForm = z.object({
  item: field.regex(/^\d{1,5}$/, "item: the vend item number, a whole number 0 to 65535"),
  name: field,
  vat: field,
  price: field,
});

const MemberForm = z.object({
  plan: field.min(1, "choose a plan"),
  name: field.min(1, "name: the member's name").max(60, "name: at most 60 characters"),
  badgeUid: field.min(1, "card UID: the hex digits printed on or read from the card"),
});

/** The first zod issue as `path: message` (the field named so the manager sees what to fix). */
function firstIssue(e: z.ZodError): string {
  const i = e.issues[0];
  if (i === undefined) return "invalid input";
  const path = i.path.map(String).join(".");
  return path === "" || i.message.startsWith(`${path}:`) ? i.message : `${path}: ${i.message}`;
}

function parse<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const r = schema.safeParse(typeof body === "object" && body !== null ? body : {});
  if (!r.success) throw new FormError(firstIssue(r.error));
  return r.data;
}

async function companyOrThrow(ctx: FleetContext, id: string): Promise<{ catalogue: string }> {
  const row = await companyCatalogue(ctx, id);
  if (row === undefined) throw new FormError("no such company", 404);
  return row;
}

/** `POST /companies`: returns the new company's id. */
export async function createCompanyFromForm(ctx: FleetContext, body: unknown): Promise<string> {
  const f = parse(CompanyForm, body);
  if (!/^\d{1,3}$/.test(f.dueDays)) throw new FormError("dueDays: payment terms in days, 1 to 365");
  const input = CompanyInput.safeParse({
    name: f.name,
    orgNumber: f.orgNumber,
    delivery: f.delivery,
    phone: f.phone === "" ? null : f.phone.replace(/\s/g, ""),
    issuerId: f.issuerId,
    country: f.country,
    dueDays: Number(f.dueDays),
    ...(f.catalogue === "" ? {} : { catalogue: f.catalogue }),
  });
  if (!input.success) throw new FormError(firstIssue(input.error));
  return createCompany(ctx, input.data);
}

/** `POST /companies/:id/units`: the unit must be enrolled (pending or approved, not revoked). */
export async function assignUnitFromForm(ctx: FleetContext, companyId: string, body: unknown): Promise<void> {
  await companyOrThrow(ctx, companyId);
  const f = parse(UnitForm, body);
  const unit = await unitStatus(ctx, f.unit);
  if (unit === undefined || unit.status === "revoked") throw new FormError("unit: no such enrolled unit");
  await assignUnit(ctx, companyId, unit.id);
}

/** The VAT rate typed as a percentage (`25`, `12.5`, `6.25`) in basis points; exact, at most 100 %. */
export function vatBasisPoints(typed: string): number {
  let bp: number;
  try {
    bp = parseAmount(typed.replace(/\s*%$/, ""), 2);
  } catch {
    throw new FormError("VAT rate: a percentage such as 25 or 12.5 (at most 2 decimals)");
  }
  if (bp > 10_000) throw new FormError("VAT rate: at most 100 %");
  return bp;
}

/** `POST /companies/:id/products`: sets or replaces the item in the company's catalogue. */
export async function setProductFromForm(ctx: FleetContext, companyId: string, body: unknown): Promise<void> {
  const company = await companyOrThrow(ctx, companyId);
  const f = parse(ProductForm, body);
  const vatBp = vatBasisPoints(f.vat);
  let price: number;
  try {
    price = parseAmount(f.price, 2);
  } catch (e) {
    if (e instanceof MoneyFormatError) throw new FormError("price: an amount incl. VAT such as 12.50");
    throw e;
  }
  const input = ProductInput.safeParse({
    catalogue: company.catalogue,
    item: Number(f.item),
    name: f.name,
    vatBp,
    price,
  });
  if (!input.success) throw new FormError(firstIssue(input.error));
  await setProduct(ctx, input.data);
}

/**
 * `POST /companies/:id/members`: a company-paid member through the plans service (the card UID is hashed
 * there at once; it is neither stored nor logged, and no message here repeats it).
 */
export async function addMemberFromForm(
  ctx: FleetContext,
  settings: { badgeSalt: string },
  companyId: string,
  body: unknown,
): Promise<string> {
  await companyOrThrow(ctx, companyId);
  const f = parse(MemberForm, body);
  try {
    return await addCompanyMember(ctx, settings, {
      planId: f.plan,
      companyId,
      name: f.name,
      badgeUid: f.badgeUid,
    });
  } catch (e) {
    if (e instanceof PlansError)
      throw new FormError(
        e.status === 404
          ? "plan: no such active plan"
          : e.status === 409
            ? "card: already in use"
            : e.message,
      );
    throw e;
  }
}
