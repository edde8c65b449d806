/** Pure tests of the status printer and record readers: width, colour rules, drift with secret markers, memory. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { envOf, memoryOf, kvCacheOf, WATERMARK_WARN_FACTOR } from '../../runtime/status/parse.js';
import { renderTable, useColour, wrap } from '../../runtime/status/table.js';
import type { NodeStatus, StatusReport } from '../../runtime/status/types.js';
import { nodeState } from './fixtures.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const sha = (lines: string[]): string => createHash('sha256').update(lines.map((l) => `${l}\n`).join('')).digest('hex');

function envText(body: string[], extra: string[] = []): string {
  const header = ['# pulse-profile: best', '# pulse-node: spark2', '# pulse-recipe: qwen38-flash', '# pulse-overlay: none', '# pulse-rendered: 2026-09-23T10:15:00Z', `# pulse-sha256: ${sha(body)}`];
  return [...header, ...body, ...extra, ''].join('\n');
}

test('drift: unchanged body is clean; carried secret lines (replaced by the node) do not count; an edit does', () => {
  const body = ['A="1"', 'B="2"'];
  const clean = envOf({ kind: 'env', path: '/e', exists: true, text_b64: b64(envText(body, ['@@PULSE_SECRET_LINE@@', '@@PULSE_SECRET_LINE@@'])) });
  assert.deepEqual([clean.renderedByPulse, clean.profile, clean.drift], [true, 'best', false]);
  const edited = envOf({ kind: 'env', path: '/e', exists: true, text_b64: b64(envText(body).replace('B="2"', 'B="3"')) });
  assert.equal(edited.drift, true);
  const foreign = envOf({ kind: 'env', path: '/e', exists: true, text_b64: b64('A=1\n') });
  assert.deepEqual([foreign.renderedByPulse, foreign.drift], [false, false]);
  assert.equal(envOf({ kind: 'env', path: '/e', exists: false }).exists, false);
});

test('memory: warning at and above the factor threshold, and below the gate with no server', () => {
  const rec = (factor: number, kib = 110 * 1024 * 1024) => ({ kind: 'memory', availableKiB: kib, totalKiB: 128 * 1024 * 1024, watermarkScaleFactor: factor });
  assert.equal(memoryOf(rec(10), 100, false)?.warning, null);
  assert.equal(memoryOf(rec(WATERMARK_WARN_FACTOR - 1), 100, false)?.warning, null);
  assert.match(memoryOf(rec(WATERMARK_WARN_FACTOR), 100, false)?.warning ?? '', /gate may be unreachable/);
  assert.match(memoryOf(rec(10, 96 * 1024 * 1024), 100, false)?.warning ?? '', /below the 100 GiB gate with no server running/);
  assert.equal(memoryOf(rec(10, 20 * 1024 * 1024), 100, true)?.warning, null, 'a running server uses the memory');
  assert.equal(memoryOf(undefined, 100, false), null);
});

test('KV cache: log first, then the saved value while a container exists, else none', () => {
  const st = nodeState('spark2', { kvCacheLine: 'GPU KV cache size: 5 tokens' });
  const none = { tokens: null, concurrency: null, concurrencyForTokens: null };
  // The numbers ride along (status --json gives numbers, not only the log line).
  assert.deepEqual(kvCacheOf({ kind: 'kv-cache', line: 'GPU KV cache size: 7 tokens' }, true, st), { line: 'GPU KV cache size: 7 tokens', source: 'log', ...none, tokens: 7 });
  assert.deepEqual(kvCacheOf({ kind: 'kv-cache', line: '' }, true, st), { line: 'GPU KV cache size: 5 tokens', source: 'state', ...none, tokens: 5 });
  assert.deepEqual(kvCacheOf(undefined, false, st), { line: null, source: null, ...none });
  const full = kvCacheOf({ kind: 'kv-cache', line: 'GPU KV cache size: 1,163,152 tokens, Maximum concurrency for 524,288 tokens per request: 2.22x' }, true, null);
  assert.deepEqual([full.tokens, full.concurrency, full.concurrencyForTokens], [1163152, 2.22, 524288]);
});

function report(): StatusReport {
  const n: NodeStatus = {
    node: 'spark1', protected: true, answered: false, error: `unreachable: ${'x'.repeat(300)}`, recipe: null, container: null, containers: [],
    env: null, health: { checked: false, skipped: 'not checked: the node did not answer', httpStatus: null, ok: false, modelsOk: false, servedModels: [], maxModelLen: null, detail: null },
    kvCache: { line: null, source: null, tokens: null, concurrency: null, concurrencyForTokens: null }, memory: null, gpuProcesses: null, lastDeploy: null, lastKnownGood: null, watchdog: null, deploy: null, lock: null, gpuProbe: null, endpoint: null, tunnel: null,
    verdict: 'unreachable', healthy: false, warnings: [`a long warning ${'word '.repeat(60)}`],
  };
  return { version: 1, allAnswered: false, allHealthy: false, nodes: [n], notes: [`a note ${'word '.repeat(40)}`] };
}

test('table: every line fits 100 columns, long text wraps, colour only when asked', () => {
  const plain = renderTable(report(), { colour: false });
  for (const l of plain.split('\n')) assert.ok(l.length <= 100, l);
  assert.doesNotMatch(plain, /\u001b\[/);
  assert.match(plain, /^spark1 +unreachable /m);
  assert.doesNotMatch(plain, /unreachable: unreachable/);
  const coloured = renderTable(report(), { colour: true });
  assert.match(coloured, /\u001b\[31m/);
  for (const l of coloured.split('\n')) assert.ok(l.replace(/\u001b\[\d+m/g, '').length <= 100);
  assert.deepEqual(wrap('aaa bbb ccc', 2, 7), ['aaa bbb', '  ccc']);
});

test('colour: a TTY without NO_COLOR; never with NO_COLOR or without a TTY', () => {
  assert.equal(useColour({ isTTY: true }, {}), true);
  assert.equal(useColour({ isTTY: true }, { NO_COLOR: '1' }), false);
  assert.equal(useColour({ isTTY: false }, {}), false);
  assert.equal(useColour({}, {}), false);
});

test('table: a deploy shows its step n/9 and wait progress; its link is whole (never cut), the only line past 100', () => {
  const r = report();
  const n = r.nodes[0] as NodeStatus;
  const url = `http://127.0.0.1:8233/namespaces/default/workflows/pulse-model-spark1/${'0123456789abcdef'.repeat(4)}/history`;
  Object.assign(n, { answered: true, error: null, warnings: [], verdict: 'deploying', healthy: true });
  n.deploy = { workflowId: 'pulse-model-spark1', runId: 'r', action: 'up', profile: 'best', step: 'readiness', stepIndex: 7, stepCount: 9, elapsedS: 552, wait: { step: 'readiness', elapsedS: 549, timeoutS: 900, attempt: 12 }, uiUrl: url };
  const text = renderTable(r, { colour: false, detail: true });
  const lines = text.split('\n');
  assert.match(lines[1] ?? '', /deploying .* up 7\/9 readiness 61%$/);
  assert.match(text, /deploy +pulse-model-spark1 up best step readiness \(7\/9\), 9m12s in the deploy, waiting 9m09s of\s+15m00s \(61%\)/);
  assert.ok(lines.includes(`  ui         ${url}`), text);
  for (const l of lines) if (!l.includes(url)) assert.ok(l.length <= 100, l);
});
