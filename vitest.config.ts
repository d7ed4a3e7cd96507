import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

const include = ["src/**/*.test.ts", "drivers/**/*.test.ts", "test/**/*.test.ts"];
/**
 * The seeded crash proofs: each file runs its four plans at once, dozens of daemons spawned and SIGKILLed at
 * moments counted from each spawn. They run after the rest and alone, one file at a time, as the whole suite
 * used to, so their kill windows meet the machine they were set for. The emulated Pi (qemu-aarch64 keeps a
 * core busy for minutes) runs there too, so it slows no timing-sensitive file.
 */
const alone = [
  "test/unit/crash-random.test.ts",
  "test/unit/crash-points.test.ts",
  "test/board/arm64.test.ts",
];

export default defineConfig({
  test: {
    // No `include` here: `extends: true` merges arrays, so each project names its own files.
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "suite",
          include,
          exclude: [...configDefaults.exclude, ...alone],
          // Vitest runs availableParallelism() - 1 files at once by default: one on a 2-core machine. Most
          // files wait on child processes, sockets and timers rather than compute, so two at once there
          // (measured there: 444 s with the crash proofs after, alone, against 710 s one file at a time).
          maxWorkers: Math.max(2, availableParallelism() - 1),
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "crash", include: alone, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
