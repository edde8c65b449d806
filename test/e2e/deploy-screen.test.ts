/**
 * Issue 30 items 3, 5, 6, 7, 8: the deploy screen as an operator sees it, through the CLI in a pseudo-terminal of 80
 * and 120 columns (python3's pty, the screen rebuilt by test/helpers/term.ts), against simulated nodes over real sshd
 * and the embedded Temporal dev server: one line per step and no bookkeeping lines, the first-run notice as one
 * sentence with the workflow link still on a 24-row screen at the long wait; a wait that shows its deadline and a
 * stall and fails naming the phase; a server that dies while it loads is "not ready" (exit 7) in pulse's words, with
 * the auto-rollback as a section of its own and the cause said once; the hint that really goes back; a cancel that
 * stops the half-started server, reads CANCELLED, and `cancel --wait` that says how it ended.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Sim } from '../sim/index.js';
import { CLI, runCli } from '../helpers/cli.js';
import { savedNodeState, startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { hasPty, runInPty } from '../helpers/pty.js';
import { TestTerminal } from '../helpers/term.js';
import { until } from '../helpers/until.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

interface Screen {
  code: number;
  /** Every byte the CLI wrote to the terminal (live lines that were redrawn included). */
  raw: string;
  /** The final screen, every row kept (none scrolled off), a line the terminal wrapped joined again. */
  rows: string[];
  /** The screen's rows as the terminal shows them. */
  screen?: string[];
}

/** The lines of a screen: a full row (the terminal wrapped it) continues on the next. */
function logical(rows: string[], cols: number): string[] {
  const out: string[] = [];
  let carry = '';
  rows.forEach((r, i) => {
    carry += r;
    // A row that fills the width continues on the next, unless the next begins a line of its own.
    const next = rows[i + 1] ?? '';
    if (Array.from(r).length < cols || /^( {0,2}[✓✗↺→]|up |cancel |Started )/.test(next)) {
      out.push(carry);
      carry = '';
    }
  });
  if (carry) out.push(carry);
  return out;
}

/** Runs the CLI in a pty of cols x rows (test/helpers/pty.ts); resolves with its exit code, its bytes and the final screen. */
async function inPty(cols: number, args: string[], rows = 40): Promise<Screen> {
  const r = await runInPty(cols, rows, [process.execPath, CLI, ...args], { ...process.env, ...env, NO_COLOR: '1' }, { timeoutMs: 600_000 });
  const screen = new TestTerminal(cols).write(r.output).lines();
  return { code: r.code, raw: r.output, rows: logical(screen, cols), screen };
}

const skip = !hasPty && 'no python3 pty';
const shown = (s: Screen): string => s.rows.join('\n');
const squash = (t: string): string => t.replace(/\s+/g, '');

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-screen-', { nodes: ['simA', 'simB'], readyDelayMs: 300 }));
});

after(() => stopSimCli(sim, dir));

test('item 7: the first run at 80x24: one line per step, no bookkeeping, the worker notice one sentence, the link still on screen at the wait', { skip }, async () => {
  const s = await inPty(80, ['model', 'up', 'datagen', '--node', 'simA'], 24);
  assert.equal(s.code, 0, shown(s));
  assert.equal(s.rows.filter((r) => r.startsWith('→ ')).length, 0, `no → line stays on a terminal:\n${shown(s)}`);
  for (const step of ['1/9 preflight', '3/9 stop', '6/9 start', '7/9 readiness', '9/9 publish state']) {
    assert.equal(s.rows.filter((r) => r.startsWith(`✓ ${step} on simA (`)).length, 1, `${step} once:\n${shown(s)}`);
  }
  assert.doesNotMatch(shown(s), /check plan|node lock|node unlock|state starting/, 'bookkeeping steps only with --verbose');
  const notice = shown(s).match(/Started a background pulse worker \(pid \d+, log [^)]+\) to run this deploy; it goes on if this terminal closes and exits after \d+ s idle\./);
  assert.ok(notice, `one sentence:\n${shown(s)}`);
  assert.doesNotMatch(shown(s), /no pulse worker polled/);
  // The screen when the long wait begins: every row above the readiness line, plus that line, fits 24 rows.
  const rows = s.screen ?? [];
  const link = rows.findIndex((r) => r.includes('/namespaces/default/workflows/pulse-model-'));
  const readiness = rows.findIndex((r) => r.startsWith('✓ 7/9 readiness on simA'));
  assert.ok(link >= 0 && readiness > link, rows.join('\n'));
  assert.ok(readiness + 1 <= 24, `the workflow link (row ${link + 1}) is still on a 24-row screen at the wait (row ${readiness + 1}):\n${rows.join('\n')}`);
  // --verbose brings them back.
  const v = await runCli(['model', 'up', 'datagen', '--node', 'simA', '--verbose'], env);
  assert.match(v.stdout, /✓ node lock on simA/);
});

test('item 8 at 80 columns: the wait says "of 45s" and a stall, and the error names the phase where the server stuck', { skip }, async () => {
  const node = sim!.node('simB');
  node.setControl({ holdPhase: true });
  try {
    const s = await inPty(80, ['model', 'up', 'best', '--node', 'simB', '--timeout-s', '45']);
    assert.equal(s.code, 8, shown(s)); // timeout
    assert.match(s.raw, /7\/9 readiness on simB {2}.* {2}\d+s of 45s/, 'the live line counts against the deadline');
    assert.match(s.raw, /no change for (2\d|3\d|4\d)s {2}\d+s of 45s/, 'and says the server has not moved');
    // Compared without white space: a row the terminal wrapped at a space lost it at the row's end.
    const text = squash(shown(s));
    assert.match(text, new RegExp(squash('✗ 7/9 readiness on simB \\(4\\ds\\): failed: the server did not answer GET /v1/models with 200 within 45 s; the server stuck at sizing the KV cache')));
    assert.match(text, new RegExp(squash('no change for \\d+ s \\(\\d+ probes; last answer')));
    assert.match(shown(s), /^up best on simB: FAILED at readiness \(cause above\), node failed$/m);
    // on its ✗ line, and again right above the verdict, which comes last (the ✗ line may be off a 24-row screen)
    assert.equal(text.split(squash('the server stuck at')).length - 1, 2, `the cause on the ✗ line and above the verdict:\n${shown(s)}`);
  } finally {
    node.setControl({ holdPhase: false });
  }
});

test('item 3 at 120 columns: a crash while loading is "not ready" (exit 7), the auto-rollback has its section, the cause once, status names the up', { skip }, async () => {
  const node = sim!.node('simA');
  const before = await runCli(['model', 'up', 'datagen', '--node', 'simA'], env); // what the rollback goes back to
  assert.equal(before.code, 0, before.stdout + before.stderr);
  node.setFailure('die-during-readiness'); // the up's server and the rollback's both die while they load
  let s: Screen;
  try {
    s = await inPty(120, ['model', 'up', 'best', '--node', 'simA', '--auto-rollback', '--timeout-s', '60']);
  } finally {
    node.setFailure('none');
  }
  const text = shown(s);
  assert.equal(s.code, 7, text);
  assert.doesNotMatch(text, /exit 1[0-4] \(|precondition|see docker logs/, 'no script numbering, no precondition, no docker hint');
  assert.match(text, /^✗ 7\/9 readiness on simA \([\d.]+s\): failed: simA: the server will not become ready: container vllm-qwen38 is exited \(exit 1: the server failed\) before \/v1\/models answered$/m);
  assert.match(text, /^↺ auto-rollback: back to the \.env that ran before \(workflow pulse-model-simA-rollback\)$/m);
  assert.match(text, /^ {2}✓ check backup on simA /m);
  assert.match(text, /^ {2}✓ 5\/9 write \.env on simA /m);
  assert.match(text, /^ {2}✗ 7\/9 readiness on simA /m);
  assert.match(text, /^↺ auto-rollback: FAILED, node failed$/m);
  assert.match(text, /^up best on simA: FAILED at readiness \(cause above\), node failed; the auto-rollback failed too \(see its section\)$/m);
  assert.match(text, /pulse model logs --node simA/);
  // The cause: on the up's ✗ line and again right above the closing line (which comes last), once for the
  // rollback's own readiness; never in the closing line itself.
  assert.equal(text.split('the server will not become ready').length - 1, 3, text);
  // What goes back: the exact bytes the up replaced.
  assert.match(text, /to go back: pulse model rollback --node simA --to \S+\.env\.pulse-bak-\d{8}T\d{6}Z$/m);
  const st = await savedNodeState(dir, 'simA');
  assert.deepEqual([st.action, st.profile, st.state], ['up', 'best', 'failed'], 'the record names the up the operator ran, not the rollback');
  const status = await runCli(['model', 'status', '--node', 'simA'], env);
  assert.match(status.stdout, /up best → failed/);
  assert.doesNotMatch(status.stdout, /up datagen → failed/);
});

test('items 5 and 6 at 120 columns: a detach names rollback, not `up best`; cancel --wait stops the half-started server and says CANCELLED', { skip }, async () => {
  const node = sim!.node('simB');
  const first = await runCli(['model', 'up', 'best', '--node', 'simB'], env);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  node.setControl({ holdReady: true }); // the next server loads, then waits to listen: a start that is half done
  try {
    const d = await inPty(120, ['model', 'up', 'best', '--node', 'simB', '--restart', '--detach']);
    assert.equal(d.code, 0, shown(d));
    assert.doesNotMatch(shown(d), /up best --node simB/, 'never suggests the profile the node already runs');
    assert.match(shown(d), /roll back: pulse model rollback --node simB {3}\(once it has ended: the \.env it replaced, byte for byte/);
    await until('the half-started server runs', () => node.docker('ps', '--format', '{{.Names}}').includes(node.containerName) && node.startShCalls().length >= 2, 60_000);
    await until('the readiness wait began', async () => (await runCli(['model', 'status', '--node', 'simB', '--json', '--no-http'], env)).stdout.includes('"step": "readiness"'), 60_000, { everyMs: 500 });
    const c = await inPty(120, ['model', 'cancel', '--node', 'simB', '--wait']);
    const text = shown(c);
    assert.equal(c.code, 0, text);
    assert.match(text, /^cancel requested: up best on simB/m);
    assert.match(text, /^up best on simB: CANCELLED, node failed: readiness: deploy cancelled by request$/m);
    assert.match(text, /the server this up had started was stopped: it does not go on to serve best/);
    // The .env was the same (--restart): what goes back is that live .env's exact bytes, never `up best` again.
    assert.match(text, /to go back: pulse model rollback --node simB --to \S+\/\.env$/m);
    assert.doesNotMatch(text, /pulse model up best/);
    node.setControl({ holdReady: false });
    // Nothing goes on to serve the abandoned start on a node marked failed.
    await new Promise((r) => setTimeout(r, 1500));
    assert.doesNotMatch(node.docker('ps', '--format', '{{.Names}}'), new RegExp(node.containerName));
    assert.equal((await savedNodeState(dir, 'simB')).state, 'failed');
    const h = await runCli(['model', 'history', '--node', 'simB'], env);
    assert.match(h.stdout, /up best on simB +\S+ +CANCELLED; node marked failed$/m);
    assert.doesNotMatch(h.stdout, /FAILED; node marked failed: readiness: deploy cancelled/);
  } finally {
    node.setControl({ holdReady: false });
  }
});
