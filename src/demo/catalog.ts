import type { Minor } from "../core/money.js";

export interface Product {
  item: number;
  name: string;
  price: Minor;
}

/** What the demo vending machine sells. */
export const CATALOG: readonly Product[] = [
  { item: 11, name: "Sparkling water", price: 1500 },
  { item: 12, name: "Cola", price: 2000 },
  { item: 21, name: "Chocolate bar", price: 1250 },
  { item: 22, name: "Crisps", price: 1800 },
  { item: 31, name: "Coffee", price: 2500 },
];

/** A small seeded PRNG (mulberry32), so a demo run can be repeated exactly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
