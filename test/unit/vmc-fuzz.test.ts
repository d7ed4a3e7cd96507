import { describe, expect, it } from "vitest";
import {
  createCashlessDialect,
  type HostCmd,
  initialState,
  type MachineState,
  step,
} from "../../drivers/vmc/adapter/index.js";
import { seededRandom } from "../../src/core/random.js";

// Fuzz of the pure session machine (seeded, reproducible): ≥ 100,000 random and mutated lines with host
// commands, timeouts and link losses mixed in. Invariants: no crash, bounded state, and no approval ever
// leaves without a pending vend request at exactly that amount (vending-mdb §1.5 rule 5).

const SEED = 0x5eed_2026;
const LINES = 200_000;

describe("vmc session machine fuzz", () => {
  it(`survives ${LINES} random and mutated lines with every invariant intact`, () => {
    const rnd = seededRandom(SEED);
    const int = (n: number) => Math.floor(rnd() * n);
    const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;
    const amount = () =>
      pick(["0.00", "1.00", "1.50", "15.19", "2", "655.35", "0.01", `${int(1000)}.${int(100)}`]);
    const valid = (): string =>
      pick([
        "r,ACK",
        "c,0",
        "c,1",
        "c,SET,OK",
        "c,STATUS,INACTIVE",
        "c,STATUS,DISABLED",
        "c,STATUS,ENABLED",
        "c,STATUS,IDLE",
        `c,STATUS,IDLE,${amount()}`,
        `c,STATUS,VEND,${amount()},${int(70000)}`,
        "c,VEND,SUCCESS",
        `c,VEND,SUCCESS,${int(100)}`,
        "c,ERR,VEND 1",
        "c,ERR,VEND 3",
        "c,ERR,VEND 5",
        'c,ERR,"VEND -3"',
        'c,ERR,"cashless is on"',
        "v,1.2.3",
      ]);
    const mutate = (line: string): string => {
      const chars = [...line];
      for (let k = 1 + int(3); k > 0; k--) {
        const at = int(chars.length + 1);
        switch (int(5)) {
          case 0:
            chars.splice(at, 1);
            break;
          case 1:
            chars.splice(at, 0, String.fromCharCode(int(256)));
            break;
          case 2:
            chars.splice(at, 0, pick([",", ".", "-", "0", "9", " ", '"']));
            break;
          case 3:
            chars.length = Math.min(chars.length, at);
            break;
          default:
            chars.splice(at, 0, ...chars.slice(0, int(chars.length)));
        }
      }
      return chars.join("");
    };
    const randomLine = () => Array.from({ length: int(40) }, () => String.fromCharCode(int(128))).join("");
    const dialect = createCashlessDialect(2);

    let state: MachineState = initialState;
    let maxStateSize = 0;
    let approvals = 0;
    let outcomes = 0;
    const check = (prev: MachineState, input: Parameters<typeof step>[1]) => {
      const s = step(prev, input);
      if (s.send?.kind === "approve") {
        approvals++;
        expect(prev.reader.s).toBe("vend");
        expect(prev.reader.s === "vend" && prev.reader.price === s.send.amount).toBe(true);
      }
      for (const e of s.events) {
        if (e.type === "vendSucceeded" || e.type === "vendFailed") {
          outcomes++;
          expect(prev.reader.s).toBe("approved");
        }
      }
      maxStateSize = Math.max(maxStateSize, JSON.stringify(s.state).length);
      return s.state;
    };

    for (let i = 0; i < LINES; i++) {
      const r = rnd();
      const line = r < 0.55 ? valid() : r < 0.9 ? mutate(valid()) : randomLine();
      state = check(state, { kind: "line", msg: dialect.parse(line) });
      const c = rnd();
      // Bias towards the interesting states: a pending request gets an approval attempt half the time.
      if (state.reader.s === "vend" && !state.pending && rnd() < 0.5) {
        const price = state.reader.price;
        state = check(state, {
          kind: "command",
          cmd: { kind: "approve", amount: rnd() < 0.7 ? price : int(70000) },
        });
      } else if (c < 0.25) {
        const pendingPrice = state.reader.s === "vend" ? state.reader.price : int(2000);
        const cmd: HostCmd = pick<HostCmd>([
          { kind: "approve", amount: rnd() < 0.5 ? pendingPrice : int(70000) },
          { kind: "approve", amount: pendingPrice + pick([-1, 1, 100]) },
          { kind: "deny" },
          { kind: "start", funds: int(1000) },
          { kind: "stop" },
          { kind: "switch", enabled: rnd() < 0.5 },
          { kind: "setconf", key: "mdb-always-idle", value: "1" },
          { kind: "display", text: "hi" },
        ]);
        state = check(state, { kind: "command", cmd });
      } else if (c < 0.28) {
        state = check(state, { kind: "timeout" });
      } else if (c < 0.285) {
        state = check(state, { kind: "linkLost" });
      }
    }
    expect(maxStateSize).toBeLessThan(200);
    expect(approvals).toBeGreaterThan(100);
    expect(outcomes).toBeGreaterThan(10);
  });
});
