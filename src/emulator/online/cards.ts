import { constants, generateKeyPairSync, publicEncrypt, randomBytes } from "node:crypto";
import type { SimUser } from "../types.js";

/**
 * A simulated card in a user's wallet. The numbers are the card schemes' published test numbers: the
 * emulator never holds real card data. A co-branded card carries a domestic and an international type.
 */
export interface SimCard {
  pan: string;
  /** Domestic type first, then the international one (co-branded), or a single type. */
  types: readonly string[];
  expiryMonth: number;
  expiryYear: number;
}

/** The age of users seeded without one (a choice: adult). */
export const DEFAULT_AGE = 30;

/** The cards of a simulated user, from their features (credit and/or debit). */
export function cardsOf(user: SimUser): SimCard[] {
  const cards: SimCard[] = [];
  if (user.features.includes("creditCard")) {
    cards.push({ pan: "4111111111111111", types: ["VISA-CREDIT"], expiryMonth: 12, expiryYear: 2030 });
    cards.push({ pan: "5555555555554444", types: ["MC-CREDIT"], expiryMonth: 12, expiryYear: 2030 });
  }
  if (user.features.includes("debitCard")) {
    cards.push({
      pan: "4571000000000001",
      types: ["DANKORT", "VISA-DEBIT"],
      expiryMonth: 6,
      expiryYear: 2031,
    });
    cards.push({ pan: "5200828282828210", types: ["MC-DEBIT"], expiryMonth: 6, expiryYear: 2031 });
  }
  return cards;
}

/**
 * The card and the card type chosen: the first card with `lastFourDigits` among those with an allowed type,
 * else the first eligible card; for a co-branded card the domestic type unless the payment prefers the
 * international part (and it is allowed).
 */
export function chooseCard(
  cards: readonly SimCard[],
  allowed: readonly string[],
  lastFour: string | null,
  preferInternational: boolean,
): { card: SimCard; type: string } | null {
  const eligible = cards.filter((c) => c.types.some((t) => allowed.includes(t)));
  const card =
    (lastFour === null ? undefined : eligible.find((c) => c.pan.endsWith(lastFour))) ?? eligible[0];
  if (card === undefined) return null;
  const types = card.types.filter((t) => allowed.includes(t));
  const type = (preferInternational ? types.at(-1) : types[0]) ?? "";
  return { card, type };
}

export function maskPan(pan: string): string {
  return `${pan.slice(0, 6)}${"X".repeat(pan.length - 10)}${pan.slice(-4)}`;
}

/** The emulator's card-data exchange test key pair (RSA 2048, made at start, never a production key). */
export interface TestKey {
  publicKeyId: number;
  publicKeyPem: string;
  privateKeyPem: string;
}

export function makeTestKey(publicKeyId = 1): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return { publicKeyId, publicKeyPem: publicKey, privateKeyPem: privateKey };
}

/** The test card's data for an `encryptedPanCallbackUrl`: RSA-OAEP (SHA-256) of `{pan, expiryMonth, expiryYear}`, base64. */
export function encryptCard(card: SimCard, key: TestKey): string {
  const clear = JSON.stringify({ pan: card.pan, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear });
  return publicEncrypt(
    { key: key.publicKeyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" },
    Buffer.from(clear),
  ).toString("base64");
}

/** A test network token for a `tokenCallbackUrl` (random, not derived from the card number). */
export function testToken(): string {
  return `tok_test_${randomBytes(12).toString("hex")}`;
}
