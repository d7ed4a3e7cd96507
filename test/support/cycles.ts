import { importsOf } from "./layers.js";

/**
 * The circles inside a room (issue 44): a room is a folder of src/ or drivers/ with its subfolders (a fleet
 * feature, src/fleet/<feature>/, is a room of its own), and its files must import each other in one direction
 * only, so a room can be read from the bottom up. Every import counts, `import type` included
 * (a circle through types still ties the files' meanings together). Each circle is reported as its strongly
 * connected set of files, sorted, joined by ` <-> `.
 */
export function roomCycles(files: ReadonlyMap<string, string>, exempt: (file: string) => boolean): string[] {
  const uses = new Map<string, Set<string>>();
  for (const [file, source] of files) {
    if (exempt(file)) continue;
    const room = roomOf(file);
    for (const edge of importsOf(file, source)) {
      if (roomOf(edge.to) !== room || exempt(edge.to) || !files.has(edge.to)) continue;
      const set = uses.get(file) ?? new Set<string>();
      set.add(edge.to);
      uses.set(file, set);
    }
  }
  return stronglyConnected(uses)
    .filter((set) => set.length > 1 || uses.get(set[0] ?? "")?.has(set[0] ?? "") === true)
    .map((set) => [...set].sort().join(" <-> "))
    .sort();
}

/** Tarjan's strongly connected components of a directed graph given as adjacency sets. */
function stronglyConnected(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(node) === index.get(node)) {
      const set: string[] = [];
      let top: string | undefined;
      do {
        top = stack.pop();
        if (top === undefined) break;
        onStack.delete(top);
        set.push(top);
      } while (top !== node);
      out.push(set);
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return out;
}

/** The room of a repository path: `src/<dir>`, `src/fleet/<feature>` or `drivers/<dir>`. */
function roomOf(file: string): string {
  const parts = file.split("/");
  return parts.slice(0, parts[1] === "fleet" ? 3 : 2).join("/");
}
