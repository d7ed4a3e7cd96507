/**
 * Manager forms on `/companies` (issue 18): create a company, make it the payer of a unit, set or replace a
 * catalogue product, add a company-paid member. Form bodies are parsed here (zod, amounts through
 * core/money.ts, the VAT rate as a percentage with up to 2 decimals → basis points) into the inputs of
 * store.ts and the plans service; a refusal is a {@link FormError} whose message the page shows (422), and
 * nothing is written. Renderers are pure and escape through html.ts.
 */
import { z } from "zod";
import { formatAmount, MoneyFormatError, parseAmount } from "../../core/money.js";
import type { FleetContext } from "../context.js";
import type { CompanyRow, ProductsTable } from "../invoices/index.js";
import {
  assignUnit,
  CompanyInput,
  createCompany,
  invoicesDb,
  ProductInput,
  setProduct,
} from "../invoices/index.js";
import { addCompanyMember, PlansError, type PlansTable } from "../plans/index.js";
import { type Html, html } from "../web/html.js";

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

/** What the forms need besides the companies: units to choose from, catalogues, plans (when configured). */
export interface CompanyFormData {
  units: { id: string; label: string; status: string }[];
  products: ProductsTable[];
  members: { id: string; name: string; company_id: string; plan: string; status: string }[];
  /** Null when plans are not configured: no member form then. */
  plans: PlansTable[] | null;
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
  const row = await invoicesDb(ctx)
    .selectFrom("companies")
    .select("catalogue")
    .where("id", "=", id)
    .executeTakeFirst();
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
  const unit = await ctx.db
    .selectFrom("units")
    .select(["id", "status"])
    .where("id", "=", f.unit)
    .executeTakeFirst();
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

/** Units, catalogue entries, company members and (when configured) plans for the forms and lists. */
export async function loadCompanyFormData(ctx: FleetContext, withPlans: boolean): Promise<CompanyFormData> {
  const units = await ctx.db
    .selectFrom("units")
    .select(["id", "label", "status"])
    .where("status", "!=", "revoked")
    .orderBy("id")
    .execute();
  const products = await invoicesDb(ctx)
    .selectFrom("products")
    .selectAll()
    .orderBy("catalogue")
    .orderBy("item")
    .execute();
  const members = await ctx.db
    .selectFrom("members")
    .innerJoin("plans", "plans.id", "members.plan_id")
    .select(["members.id", "members.name", "members.company_id", "members.status", "plans.name as plan"])
    .where("members.company_id", "is not", null)
    .orderBy("members.name")
    .execute();
  return {
    units,
    products,
    members: members.flatMap((m) => (m.company_id === null ? [] : [{ ...m, company_id: m.company_id }])),
    plans: withPlans
      ? (await ctx.db.selectFrom("plans").selectAll().orderBy("name").execute()).filter((p) => p.active === 1)
      : null,
  };
}

const rate = (bp: number): string => `${(bp / 100).toFixed(bp % 100 === 0 ? 0 : 2)} %`;

function createForm(csrf: string): Html {
  return html`<section class="company-new"><h2>New company</h2>
<form method="post" action="/companies">
<input type="hidden" name="_csrf" value="${csrf}">
<label>Name <input name="name" required maxlength="200"></label>
<label>Org. number <input name="orgNumber" required maxlength="40"></label>
<label>Delivery <select name="delivery"><option value="link">InvoiceLink</option><option value="direct">InvoiceDirect</option></select></label>
<label>Phone (InvoiceDirect) <input name="phone" placeholder="+4512345678"></label>
<label>Issuer id <input name="issuerId" required placeholder="the issuer's guid"></label>
<label>Country <select name="country"><option>DK</option><option>FI</option></select></label>
<label>Due (days) <input name="dueDays" value="14" inputmode="numeric"></label>
<label>Catalogue <input name="catalogue" value="fleet" maxlength="100"></label>
<button type="submit">Create company</button></form></section>`;
}

function companyForms(c: CompanyRow, d: CompanyFormData, csrf: string): Html {
  const base = `/companies/${encodeURIComponent(c.id)}`;
  const products = d.products.filter((p) => p.catalogue === c.catalogue);
  const members = d.members.filter((m) => m.company_id === c.id);
  const plans = d.plans;
  return html`<section class="company" id="${`company-${c.id}`}"><h2>${c.name}</h2>
<p>Units paid for: ${c.units.length === 0 ? "none" : c.units.join(", ")}</p>
<form method="post" action="${`${base}/units`}">
<input type="hidden" name="_csrf" value="${csrf}">
<label>Unit <select name="unit">${d.units.map(
    (u) =>
      html`<option value="${u.id}">${u.id}${u.label === "" ? "" : ` (${u.label})`}${u.status === "approved" ? "" : ` — ${u.status}`}</option>`,
  )}</select></label>
<button type="submit">Assign unit</button></form>
<h3>Catalogue ${c.catalogue}</h3>
${
  products.length === 0
    ? html`<p>No products yet.</p>`
    : html`<table class="products"><thead><tr><th>Item</th><th>Name</th><th>VAT</th><th>Price incl. VAT</th></tr></thead>
<tbody>${products.map((p) => html`<tr><td>${p.item}</td><td>${p.name}</td><td>${rate(p.vat_bp)}</td><td>${formatAmount(p.price)}</td></tr>`)}</tbody></table>`
}
<form method="post" action="${`${base}/products`}">
<input type="hidden" name="_csrf" value="${csrf}">
<label>Item <input name="item" required inputmode="numeric"></label>
<label>Name <input name="name" required maxlength="200"></label>
<label>VAT % <input name="vat" required value="25"></label>
<label>Price incl. VAT <input name="price" required placeholder="12.50"></label>
<button type="submit">Set product</button></form>
${
  plans === null
    ? ""
    : html`<h3>Company-paid members</h3>
${
  members.length === 0
    ? html`<p>No members yet.</p>`
    : html`<table class="company-members"><thead><tr><th>Name</th><th>Plan</th><th>Status</th></tr></thead>
<tbody>${members.map((m) => html`<tr><td><a href="${`/plans/members/${encodeURIComponent(m.id)}`}">${m.name}</a></td><td>${m.plan}</td><td>${m.status}</td></tr>`)}</tbody></table>`
}
<form method="post" action="${`${base}/members`}">
<input type="hidden" name="_csrf" value="${csrf}">
<label>Plan <select name="plan">${plans.map((p) => html`<option value="${p.id}">${p.name}</option>`)}</select></label>
<label>Name <input name="name" required maxlength="60"></label>
<label>Card UID <input name="badgeUid" required autocomplete="off"></label>
<button type="submit">Add member</button></form>`
}
</section>`;
}

/** The managers' part of `/companies`: an error (if any), the new-company form, then each company's forms. */
export function renderCompanyForms(
  companies: readonly CompanyRow[],
  d: CompanyFormData,
  csrf: string,
  error: string | null = null,
): Html {
  return html`<section class="company-forms">
${error === null ? "" : html`<p class="error" role="alert">${error}</p>`}
${createForm(csrf)}
${companies.map((c) => companyForms(c, d, csrf))}
</section>`;
}
