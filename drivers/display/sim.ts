import type { CheckinDisplay, Screen } from "./display.js";
import { sameScreen } from "./render.js";

/** The simulated display: records screens so a simulated customer (or a test) can read and "scan" them. */
export interface SimDisplay extends CheckinDisplay {
  /** Every screen drawn, oldest first. Like a real display it records a screen only when it changed. */
  readonly screens: Screen[];
  /** The screen on show now, or undefined before the first `show`. */
  last(): Screen | undefined;
  /** Calls `listener` synchronously for each new screen; returns the unsubscribe function. */
  onShow(listener: (s: Screen) => void): () => void;
}

/**
 * Creates an in-memory display. `show` never throws: a listener that throws is isolated from the engine
 * and from the other listeners. After `close()` further screens are ignored.
 */
export function createSimDisplay(): SimDisplay {
  const screens: Screen[] = [];
  const listeners = new Set<(s: Screen) => void>();
  let closed = false;

  return {
    kind: "sim",
    screens,
    last: () => screens.at(-1),
    current() {
      const screen = screens.at(-1);
      return screen === undefined ? undefined : { screen, bitmap: null };
    },
    onShow(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    show(screen) {
      if (closed || sameScreen(screens.at(-1), screen)) return;
      screens.push(screen);
      for (const listener of [...listeners]) {
        try {
          listener(screen);
        } catch {
          // A faulty observer must not block money (display.ts failure semantics).
        }
      }
    },
    async close() {
      closed = true;
      listeners.clear();
    },
  };
}
