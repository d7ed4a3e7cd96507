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

export { seededRandom } from "../core/random.js";
