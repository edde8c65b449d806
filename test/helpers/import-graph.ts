/**
 * The import graph of the source tree (every .ts under tsconfig's include), read with TypeScript's own pre-processor
 * (so comments and strings never count), and its circles. Type-only imports count too: a circle of types is still two
 * modules that each need the other. A package import is a node `npm:<name>` (no edges out), so room rules can name them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export type ImportGraph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) {
      if (name !== 'node_modules' && name !== 'dist') out.push(...sourceFiles(full));
    } else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** `@scope/name/sub` → `npm:@scope/name`, `node:fs` → `npm:node:fs`. */
function packageNode(spec: string): string {
  const parts = spec.split('/');
  return `npm:${spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]}`;
}

/** Resolves a relative `./x.js` (or `./x`, `./dir/index.js`) to the .ts file it names, or null (JSON, shell...). */
function resolveSource(fromFile: string, spec: string): string | null {
  const base = path.resolve(path.dirname(fromFile), spec);
  const stem = base.replace(/\.js$/, '');
  for (const candidate of [`${stem}.ts`, path.join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return null;
}

/** File → the files (repo-relative paths, '/'-separated) and packages (`npm:...`) it imports, dynamic import() too. */
export function importGraph(repoRoot: string): ImportGraph {
  const tsconfig = JSON.parse(readFileSync(path.join(repoRoot, 'tsconfig.json'), 'utf8')) as { include: string[] };
  const rel = (f: string): string => path.relative(repoRoot, f).split(path.sep).join('/');
  const graph: ImportGraph = new Map();
  for (const root of tsconfig.include) {
    for (const file of sourceFiles(path.join(repoRoot, root))) {
      const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      const targets: string[] = [];
      for (const { fileName } of info.importedFiles) {
        if (!fileName.startsWith('.')) targets.push(packageNode(fileName));
        else {
          const target = resolveSource(file, fileName);
          if (target) targets.push(rel(target));
        }
      }
      graph.set(rel(file), [...new Set(targets)]);
    }
  }
  return graph;
}

/** Every circle: the strongly connected components of more than one file (or a file importing itself), sorted. */
export function importCircles(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) circles.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return circles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
