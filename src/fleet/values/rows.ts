/** A value the fleet holds (issue 41), as the store returns it and the views render it. */
import type { ValueScope } from "./rules.js";

export interface HeldValue {
  scope: ValueScope;
  target: string;
  key: string;
  value: unknown;
  updatedAt: number;
  updatedBy: string;
}
