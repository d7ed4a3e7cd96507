import { describe, expect, it } from "vitest";
import { transition } from "./machine.js";
import type { Effect, EngineContext, EngineInput, EngineState } from "./types.js";

/** One transition: from a state, an input gives a state (matched partially) and exactly these effects. */
export interface Row {
  name: string;
  from: EngineState;
  input: EngineInput;
  to: Record<string, unknown> & { tag: EngineState["tag"] };
  effects: Effect["type"][];
  check?: (effects: Effect[], state: EngineState) => void;
  context?: Partial<EngineContext>;
}

/** Runs a table of transitions as one test each. */
export function transitionTable(title: string, ctx: EngineContext, rows: readonly Row[]): void {
  describe(title, () => {
    it.each(rows)("$name", (row) => {
      const { state, effects } = transition(row.from, row.input, { ...ctx, ...row.context });
      expect(state).toMatchObject(row.to);
      expect(effects.map((e) => e.type)).toEqual(row.effects);
      row.check?.(effects, state);
    });
  });
}
