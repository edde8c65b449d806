/**
 * One-way dependencies: no two modules of the source tree import each other, directly or around a longer circle
 * (type-only imports included). A circle that comes back fails here with its files named.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REPO_ROOT } from '../helpers/dev-server.js';
import { importCircles, importGraph } from '../helpers/import-graph.js';

test('the import graph finds a circle where there is one (the check can fail)', () => {
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts', 'd.ts']],
    ['e.ts', []],
  ]);
  assert.deepEqual(importCircles(graph), [['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
});

test('the import graph reads the real tree: runtime/model is imported and the workflows reach it', () => {
  const graph = importGraph(REPO_ROOT);
  assert.ok(graph.size > 100, `only ${graph.size} source files found`);
  assert.ok(graph.get('workflows/up.ts')?.includes('runtime/model/index.ts'), 'workflows/up.ts → runtime/model not seen');
});

test('the source tree has no import circle', () => {
  const circles = importCircles(importGraph(REPO_ROOT));
  assert.deepEqual(circles, [], `import circles:\n${circles.map((c) => `  ${c.join(' ⇄ ')}`).join('\n')}`);
});
