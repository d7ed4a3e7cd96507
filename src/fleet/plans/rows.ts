/** The rows the plans pages show: what store/plans.ts reads and views.ts renders. */

import type { MembersTable } from "./schema.js";

export type MemberRow = Pick<
  MembersTable,
  "id" | "name" | "status" | "agreement_status" | "grace_until" | "reason" | "company_id" | "activated_at"
> & { plan_name: string };

export interface UsageRow {
  memberId: string;
  name: string;
  plan: string;
  items: number;
  amount: number;
  overItems: number;
  overAmount: number;
}

export interface MemberDetail {
  member: MemberRow;
  charges: {
    id: string;
    period: string;
    due_date: string;
    amount: number;
    state: string;
    payment_id: string | null;
  }[];
  overages: {
    id: string;
    period: string;
    items: number;
    amount: number;
    state: string;
    oneoff_id: string | null;
  }[];
  refunds: { id: string; payment_id: string; amount: number | null; state: string; status_text: string }[];
}
