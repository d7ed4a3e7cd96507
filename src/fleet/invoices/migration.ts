/** Migration `0003_invoices`: the tables of ./schema.ts, the same on SQLite and PostgreSQL. */
import { type Kysely, sql } from "kysely";

export async function invoicesUp(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("companies")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("org_number", "text", (c) => c.notNull())
    .addColumn("delivery", "text", (c) => c.notNull())
    .addColumn("phone", "text")
    .addColumn("issuer_id", "text", (c) => c.notNull())
    .addColumn("country", "text", (c) => c.notNull())
    .addColumn("due_days", "integer", (c) => c.notNull())
    .addColumn("catalogue", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addCheckConstraint("companies_delivery", sql`delivery in ('direct', 'link')`)
    .addCheckConstraint("companies_country", sql`country in ('DK', 'FI')`)
    .addCheckConstraint("companies_phone", sql`delivery = 'link' or phone is not null`)
    .execute();
  await db.schema
    .createTable("company_units")
    .addColumn("unit_id", "text", (c) => c.primaryKey())
    .addColumn("company_id", "text", (c) => c.notNull().references("companies.id"))
    .execute();
  await db.schema
    .createTable("products")
    .addColumn("catalogue", "text", (c) => c.notNull())
    .addColumn("item", "integer", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("vat_bp", "integer", (c) => c.notNull())
    .addColumn("price", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("products_pk", ["catalogue", "item"])
    .addCheckConstraint("products_vat", sql`vat_bp >= 0 and vat_bp <= 10000`)
    .addCheckConstraint("products_price", sql`price >= 0`)
    .execute();
  await db.schema
    .createTable("invoice_numbers")
    .addColumn("issuer_id", "text", (c) => c.primaryKey())
    .addColumn("last_number", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("invoices")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("company_id", "text", (c) => c.notNull().references("companies.id"))
    .addColumn("month", "text", (c) => c.notNull())
    .addColumn("issuer_id", "text", (c) => c.notNull())
    .addColumn("number", "bigint", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("remote_status", "text")
    .addColumn("remote_id", "text", (c) => c.unique())
    .addColumn("link", "text")
    .addColumn("delivery", "text", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("total", "bigint", (c) => c.notNull())
    .addColumn("vat_total", "bigint", (c) => c.notNull())
    .addColumn("issue_date", "text", (c) => c.notNull())
    .addColumn("due_date", "text", (c) => c.notNull())
    .addColumn("last_sequence", "integer", (c) => c.notNull())
    .addColumn("send_claimed_at", "bigint")
    .addColumn("sent_at", "bigint")
    .addColumn("paid_at", "bigint")
    .addColumn("payment_date", "text")
    .addColumn("note", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addUniqueConstraint("invoices_number", ["issuer_id", "number"])
    .addUniqueConstraint("invoices_company_month", ["company_id", "month"])
    .addCheckConstraint(
      "invoices_status",
      sql`status in ('draft', 'sent', 'paid', 'unpaid', 'overdue', 'cancelled')`,
    )
    .execute();
  await db.schema
    .createTable("invoice_articles")
    .addColumn("invoice_id", "text", (c) => c.notNull().references("invoices.id"))
    .addColumn("line", "integer", (c) => c.notNull())
    .addColumn("article_number", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("unit", "text", (c) => c.notNull())
    .addColumn("quantity", "bigint", (c) => c.notNull())
    .addColumn("unit_price", "bigint", (c) => c.notNull())
    .addColumn("vat_bp", "integer", (c) => c.notNull())
    .addColumn("net", "bigint", (c) => c.notNull())
    .addColumn("vat", "bigint", (c) => c.notNull())
    .addColumn("gross", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("invoice_articles_pk", ["invoice_id", "line"])
    .execute();
  await db.schema
    .createTable("invoice_callbacks")
    .addColumn("remote_id", "text", (c) => c.notNull())
    .addColumn("sequence", "integer", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("received_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("invoice_callbacks_pk", ["remote_id", "sequence", "status"])
    .execute();
}
