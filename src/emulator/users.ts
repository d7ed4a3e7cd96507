import { EmulatorInputError } from "./errors.js";
import type { SimUser, UserFeature } from "./types.js";

const FEATURES: readonly UserFeature[] = [
  "creditCard",
  "debitCard",
  "receiptToken",
  "loyaltyMember",
  "noPartialCapture",
  "insufficientFunds",
  "slowToAccept",
  "walksAway",
];

/** A phone number as the app knows it: `+` and 6 to 15 digits. */
const PHONE = /^\+\d{6,15}$/;

/**
 * The default simulated app users. The first five per country are the sandbox test users of pos-v10 §17
 * (the fifth is modelled as "partial capture not possible"); 06-08 are this emulator's own behaviours.
 */
export function defaultUsers(): SimUser[] {
  const rows: [string, UserFeature[]][] = [
    ["01", ["creditCard"]],
    ["02", ["debitCard"]],
    ["03", ["creditCard", "receiptToken"]],
    ["04", ["creditCard", "loyaltyMember"]],
    ["05", ["creditCard", "noPartialCapture"]],
    ["06", ["creditCard", "insufficientFunds"]],
    ["07", ["creditCard", "slowToAccept"]],
    ["08", ["creditCard", "walksAway"]],
  ];
  const users: SimUser[] = [];
  for (const [suffix, features] of rows) users.push({ phone: `+45200318${suffix}`, features });
  for (const [suffix, features] of rows) users.push({ phone: `+3582003180${suffix}`, features });
  return users;
}

export function isUserFeature(value: unknown): value is UserFeature {
  return typeof value === "string" && (FEATURES as readonly string[]).includes(value);
}

/** Reads `{phone, features}` from untrusted JSON (admin API, seed file). */
export function parseUser(value: unknown): SimUser {
  if (typeof value !== "object" || value === null) throw new EmulatorInputError("a user must be an object");
  const { phone, features, age } = value as Record<string, unknown>;
  if (typeof phone !== "string" || !PHONE.test(phone)) {
    throw new EmulatorInputError("user.phone must be + and 6-15 digits");
  }
  if (!Array.isArray(features) || !features.every(isUserFeature)) {
    throw new EmulatorInputError(`user.features must be a list of: ${FEATURES.join(", ")}`);
  }
  if (age !== undefined && (typeof age !== "number" || !Number.isInteger(age) || age < 0 || age > 150)) {
    throw new EmulatorInputError("user.age must be an integer from 0 to 150");
  }
  return { phone, features: [...new Set(features)], ...(age === undefined ? {} : { age }) };
}

/** The simulated app users, by phone number. Adding a known phone replaces its features. */
export class UserRegistry {
  private readonly byPhone = new Map<string, SimUser>();

  constructor(users: Iterable<SimUser>) {
    for (const u of users) this.add(u);
  }

  add(user: SimUser): void {
    this.byPhone.set(user.phone, user);
  }

  find(phone: string): SimUser | undefined {
    return this.byPhone.get(phone);
  }

  list(): SimUser[] {
    return [...this.byPhone.values()];
  }
}
