/**
 * `up/down/watch --verbose` show the raw `@pulse` records of the node scripts. The records travel in the step
 * results (StepRaw) through workflow history, so this runs the real activities against the simulator, the real
 * CLI and the embedded dev server; without --verbose nothing changes. The cap (activities/raw.ts) and the printer
 * are checked as pure functions.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { capRaw } from '../../activities/raw.js';
import { rawOf } from '../../cli/deploy-client/follow-run.js';
import { ProgressPrinter } from '../../cli/progress-printer.js';
import type { Sim } from '../sim/index.js';
import { runCli } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

/** The raw record lines as the CLI prints them (`  <node>: @pulse {...}`), parsed; fails on any malformed one. */
function printedRecords(text: string, node: string): { kind: string; [k: string]: unknown }[] {
  const lines = text.split('\n').filter((l) => l.includes('@pulse'));
  const prefix = `  ${node}: @pulse `;
  for (const l of lines) assert.ok(l.startsWith(prefix), `not a raw record line: ${l}`);
  return lines.map((l) => JSON.parse(l.slice(prefix.length)) as { kind: string });
}

const kinds = (recs: { kind: string }[]): string[] => recs.map((r) => r.kind);

// Slow enough to answer 503 at least once: the readiness step must still show only its last probe.
before(async () => ({ sim, dir, env } = await startSimCli('pulse-verbose-', { nodes: ['simA'], readyDelayMs: 1500 })));

after(() => stopSimCli(sim, dir));

test('up --verbose prints the raw records of every node step on stderr; the waits show their last probe only', async () => {
  const r = await runCli(['model', 'up', 'best', '--node', 'simA', '--verbose'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.doesNotMatch(r.stdout, /@pulse/, 'stdout is the same as without --verbose');
  const recs = printedRecords(r.stderr, 'simA');
  for (const kind of ['check', 'env-file', 'mkdir', 'stopped', 'memory', 'write-env', 'start', 'readiness', 'models']) {
    assert.ok(kinds(recs).includes(kind), `a ${kind} record in:\n${r.stderr}`);
  }
  // One script run per step (the prelude's pgid record opens each): lock, preflight, mkdir, stop, memory, write-env,
  // start, readiness, verify, unlock; the two waits keep only their last probe.
  assert.equal(kinds(recs).filter((k) => k === 'pgid').length, 10, r.stderr);
  assert.deepEqual(recs.filter((x) => x.kind === 'lock').map((x) => x['op']), ['acquire', 'release'], 'the node lock is taken, then given back');
  assert.deepEqual(recs.filter((x) => x.kind === 'readiness').map((x) => x['ready']), [true], 'only the last readiness probe');
});

test('without --verbose no raw record is printed', async () => {
  const r = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.doesNotMatch(r.stdout + r.stderr, /@pulse/);
});

test('down --verbose --json: each step\'s records come right after its end line; stdout stays one JSON document', async () => {
  const r = await runCli(['model', 'down', '--node', 'simA', '--verbose', '--json'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal((JSON.parse(r.stdout) as { action: string }).action, 'down');
  const lines = r.stderr.split('\n');
  const end = lines.findIndex((l) => l.startsWith('✓ 1/2 stop on simA'));
  const next = lines.findIndex((l) => l.startsWith('→ 2/2 publish state on simA'));
  assert.ok(end >= 0 && next > end, r.stderr);
  assert.deepEqual(kinds(printedRecords(lines.slice(end + 1, next).join('\n'), 'simA')), ['pgid', 'stopped'], r.stderr);
});

test('watch --verbose replays the raw records of a finished deploy; watch alone does not', async () => {
  const v = await runCli(['model', 'watch', '--node', 'simA', '--verbose'], env);
  assert.equal(v.code, 0, v.stdout + v.stderr);
  // The down's four node scripts: take the node lock, drain the server (it served), stop, give the lock back.
  assert.deepEqual(kinds(printedRecords(v.stderr, 'simA')), ['pgid', 'lock', 'pgid', 'drain', 'pgid', 'stopped', 'pgid', 'lock']);
  const plain = await runCli(['model', 'watch', '--node', 'simA'], env);
  assert.doesNotMatch(plain.stdout + plain.stderr, /@pulse/);
});

test('the cap keeps the last lines within 200 lines and 16 KiB, says how many it left out, and cuts a huge line', () => {
  const few = ['@pulse {"kind":"a"}', '@pulse {"kind":"b"}'];
  assert.deepEqual(capRaw(few), few);
  const many = Array.from({ length: 250 }, (_, i) => `@pulse {"kind":"n","i":${i}}`);
  const capped = capRaw(many);
  assert.equal(capped.length, 200);
  assert.match(capped[0] ?? '', /^… 51 earlier record line\(s\) left out/);
  assert.equal(capped.at(-1), many.at(-1));
  const big = Array.from({ length: 50 }, (_, i) => `@pulse {"kind":"n","i":${i},"pad":"${'x'.repeat(1000)}"}`);
  const byBytes = capRaw(big);
  assert.ok(Buffer.byteLength(byBytes.join('')) <= 16 * 1024);
  assert.equal(byBytes.at(-1), big.at(-1));
  assert.match(byBytes[0] ?? '', /earlier record line\(s\) left out/);
  const [huge] = capRaw([`@pulse {"kind":"h","v":"${'é'.repeat(20_000)}"}`]);
  assert.ok(Buffer.byteLength(huge ?? '') <= 16 * 1024);
  assert.match(huge ?? '', /… \(line cut at \d+ bytes\)$/);
});

test('the printer prints raw records only with --verbose, and rawOf ignores results without them', () => {
  const out = { text: '', write: (s: string) => (out.text += s) };
  const err = { text: '', write: (s: string) => (err.text += s) };
  new ProgressPrinter(out).rawRecords(['@pulse {"kind":"a"}']);
  new ProgressPrinter(out, Date.now, { node: 'n', out: err }).rawRecords(rawOf({ ok: true, raw: ['@pulse {"kind":"a"}'] }));
  assert.equal(out.text, '');
  assert.equal(err.text, '  n: @pulse {"kind":"a"}\n');
  assert.deepEqual([rawOf(null), rawOf(undefined), rawOf({ raw: 'x' }), rawOf({ written: true })], [[], [], [], []]);
});
