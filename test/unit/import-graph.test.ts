/**
 * The rooms on the whole import graph (docs/ARCHITECTURE.md), dynamic import() and type imports included, which
 * lint (eslint.config.js) cannot see: one-way dependencies, so no two modules import each other, directly or around
 * a longer circle; runtime/model imports nothing outside itself, runtime/failures.ts and runtime/format.ts nothing at all; runtime imports
 * no other room and no Temporal package (ssh2 only in runtime/node/ssh.ts, zod only in runtime/config/); activities
 * import no cli/worker/workflows, the worker no cli; no command imports another; the deploy client takes from the rest of
 * cli/ only the printer's and the outcome's types; no product code imports the tests.
 * A broken rule fails with the files named.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importCircles, importGraph, type ImportGraph } from '../helpers/import-graph.js';
import { REPO_ROOT } from '../helpers/paths.js';

const graph = importGraph(REPO_ROOT);
const PRODUCT = /^(runtime|activities|worker|workflows|cli)\//;

/** Every `from → to` edge whose `from` matches and whose `to` breaks the rule. */
function offending(g: ImportGraph, from: RegExp, forbidden: (to: string, from: string) => boolean): string[] {
  const out: string[] = [];
  for (const [file, targets] of g) if (from.test(file)) for (const to of targets) if (forbidden(to, file)) out.push(`${file} → ${to}`);
  return out.sort();
}

test('the import graph finds a circle where there is one (the check can fail)', () => {
  const toy = new Map([
    ['a.ts', ['b.ts', 'npm:zod']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts', 'd.ts']],
    ['e.ts', []],
  ]);
  assert.deepEqual(importCircles(toy), [['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
  assert.deepEqual(offending(toy, /^a\.ts$/, (to) => to.startsWith('npm:')), ['a.ts → npm:zod']);
});

test('the import graph reads the real tree, dynamic imports and packages included', () => {
  assert.ok(graph.size > 100, `only ${graph.size} source files found`);
  assert.ok(graph.get('workflows/up.ts')?.includes('runtime/model/index.ts'), 'workflows/up.ts → runtime/model not seen');
  assert.ok(graph.get('cli/commands/worker.ts')?.includes('worker/main.ts'), "cli/commands/worker.ts's import('../../worker/main.js') not seen");
  assert.ok(graph.get('workflows/up.ts')?.includes('npm:@temporalio/workflow'), 'workflows/up.ts → @temporalio/workflow not seen');
});

test('the source tree has no import circle', () => {
  const circles = importCircles(graph);
  assert.deepEqual(circles, [], `import circles:\n${circles.map((c) => `  ${c.join(' ⇄ ')}`).join('\n')}`);
});

test('runtime/model imports nothing outside runtime/model', () => {
  assert.deepEqual(offending(graph, /^runtime\/model\//, (to) => !to.startsWith('runtime/model/')), []);
});

test('runtime/failures.ts and runtime/format.ts, runtime files the workflow bundle takes values from, import nothing', () => {
  assert.deepEqual(graph.get('runtime/failures.ts'), []);
  assert.deepEqual(graph.get('runtime/format.ts'), []);
});

test('runtime/steps/catalog.ts, the other one, imports only the model and the node types (types only: lint)', () => {
  assert.deepEqual(offending(graph, /^runtime\/steps\/catalog\.ts$/, (to) => !to.startsWith('runtime/model/') && to !== 'runtime/node/types.ts'), []);
});

test('runtime imports no other room and no Temporal package', () => {
  assert.deepEqual(offending(graph, /^runtime\//, (to) => !to.startsWith('runtime/') && (!to.startsWith('npm:') || to.startsWith('npm:@temporalio/'))), []);
});

test('activities import no cli, worker or workflows; the worker no cli', () => {
  assert.deepEqual(offending(graph, /^activities\//, (to) => /^(cli|worker|workflows)\//.test(to)), []);
  assert.deepEqual(offending(graph, /^worker\//, (to) => to.startsWith('cli/')), []);
});

test('ssh2 only in runtime/node/ssh.ts, zod only in runtime/config/', () => {
  assert.deepEqual(offending(graph, PRODUCT, (to, from) => to === 'npm:ssh2' && from !== 'runtime/node/ssh.ts'), []);
  assert.deepEqual(offending(graph, PRODUCT, (to, from) => to === 'npm:zod' && !from.startsWith('runtime/config/')), []);
});

test('the deploy client reaches the rest of cli/ only for the printer it writes to and the outcome it returns', () => {
  // Lint allows it only types from there; the graph (type imports included) names the two modules it may take them from.
  const types = new Set(['cli/progress-printer.ts', 'cli/follow-outcome.ts']);
  assert.deepEqual(offending(graph, /^cli\/deploy-client\//, (to) => to.startsWith('cli/') && !to.startsWith('cli/deploy-client/') && !types.has(to)), []);
});

test('no command imports another', () => {
  assert.deepEqual(offending(graph, /^cli\/commands\//, (to) => to.startsWith('cli/commands/')), []);
});

test('no product code imports the tests, the simulator or the benchmarks', () => {
  assert.deepEqual(offending(graph, PRODUCT, (to) => /^(test|bench)\//.test(to)), []);
});
