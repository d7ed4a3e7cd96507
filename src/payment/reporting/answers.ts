/**
 * The reporting interface's answers: zod schemas of the JSON bodies (amounts read exactly into signed minor
 * units), the transfer CSV reader, and the error texts of a refused call (never a request header).
 */
import { z } from "zod";
import { amountFromJson, type Minor, MoneyFormatError, parseSignedAmount } from "../../core/money.js";
import { ReportingClientError } from "./types.js";

const signedAmount = z.number().transform((v, ctx) => {
  try {
    return v < 0 ? -amountFromJson(-v) : amountFromJson(v);
  } catch (e) {
    ctx.addIssue({ code: "custom", message: e instanceof MoneyFormatError ? e.message : "bad amount" });
    return z.NEVER;
  }
});

export const TokenAnswer = z.object({
  access_token: z.string().min(1),
  token_type: z.string(),
  refresh_token: z.string().min(1).optional(),
});

export const PointsAnswer = z.object({
  paymentPoints: z.array(z.object({ paymentPointId: z.string().min(1), paymentPointName: z.string() })),
});

const LineJson = z.object({
  type: z.string().min(1),
  amount: signedAmount,
  currencyCode: z.string(),
  timestamp: z.string(),
  paymentTransactionId: z.string().min(1),
  externalTransactionId: z.string().nullable().optional(),
  merchantReference: z.string().nullable().optional(),
  transferReference: z.string().nullable().optional(),
});

export const PageJson = z.object({
  transferReference: z.string().optional(),
  transactions: z.array(LineJson),
  nextPageToken: z.string().nullable().optional(),
});

export const RefsAnswer = z.object({
  transferReferences: z.array(
    z.object({
      transferReference: z.string().min(1),
      transferReferenceDate: z.string(),
      totalTransferredAmount: signedAmount,
      currencyCode: z.string(),
    }),
  ),
});

export type Answer = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

/** RFC 4180 CSV (quoted cells, `""` escapes, CRLF or LF) → rows of cells. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else quoted = false;
      } else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(cell);
      cell = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
    } else cell += c;
  }
  if (cell !== "" || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

/** A signed decimal text (`-12.50`) as minor units, exactly. */
export function signedDecimal(text: string): Minor {
  return parseSignedAmount(text);
}

export function parseTime(s: string): number {
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new ReportingClientError(0, `reporting answer has a bad timestamp`);
  return ms;
}

/** A JSON answer checked against its schema; a non-JSON or unexpected body is a ReportingClientError. */
export function parseAnswer<T>(schema: z.ZodType<T>, a: Answer, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(a.text);
  } catch {
    throw new ReportingClientError(a.status, `${what}: the answer is not JSON`);
  }
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ReportingClientError(
      a.status,
      `${what}: unexpected answer (${issue?.path.join(".") ?? ""}: ${issue?.message ?? ""})`,
    );
  }
  return r.data;
}

export function invalidToken(a: Answer): boolean {
  const www = a.headers["www-authenticate"];
  if (typeof www === "string" && www.includes("invalid_token")) return true;
  return /"error"\s*:\s*"invalid_token"/.test(a.text);
}

/** The service's error code and description (never echoes a request header). */
export function errorText(a: Answer): string {
  try {
    const v = JSON.parse(a.text) as { error?: unknown; error_description?: unknown };
    const code = typeof v.error === "string" ? v.error : "";
    const desc = typeof v.error_description === "string" ? v.error_description.slice(0, 200) : "";
    return `${code} ${desc}`.trim();
  } catch {
    return "";
  }
}
