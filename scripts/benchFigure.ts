import { pathToFileURL } from "node:url";

export interface BenchFigure {
  name: string;
  figure: number;
  unit: string;
  target: string;
  pass: boolean;
}

/**
 * When the script at `moduleUrl` (its `import.meta.url`) is the one node was started with: runs `bench`,
 * prints one line a figure (name, figure, unit, target, pass/FAIL), or `bench failed: …` and exit code 1.
 */
export function runFiguresWhenMain(moduleUrl: string, bench: () => Promise<BenchFigure[]>): void {
  if (process.argv[1] === undefined || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  bench().then(
    (figures) => {
      for (const f of figures)
        process.stdout.write(
          `${f.name}  ${f.figure} ${f.unit}  target ${f.target}  ${f.pass ? "pass" : "FAIL"}\n`,
        );
    },
    (err: unknown) => {
      process.stderr.write(
        `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
