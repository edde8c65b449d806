/**
 * Issue 18, the operator's screen: the real ProgressPrinter in a real pseudo-terminal (python3's pty, then the
 * screen rebuilt by test/helpers/term.ts) at widths 40, 80 and 200 shows exactly one live line and no leftover
 * rows after 100 updates of a ~130-column line; in tmux (when installed) the same after a resize from 200 to 40
 * columns, on tmux's own screen; off a terminal a simulated long start prints at most one wait line per phase plus
 * one a minute, with no control character; colour only on a terminal and never with NO_COLOR; --quiet.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProgressPrinter } from '../../cli/progress-printer.js';
import { hasPty, runInPty } from '../helpers/pty.js';
import { TestTerminal } from '../helpers/term.js';

const DRIVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'live-driver.js');
const HEADER = 'up best on spark2: workflow pulse-model-spark2 (run 0b6a4e1c-7e8d-4f1a-9a51-3d1f2c9e8b77)';

/** Runs the live driver on a pty of `cols` columns (24 rows, test/helpers/pty.ts); returns everything it wrote. */
async function inPty(cols: number, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const r = await runInPty(cols, 24, [process.execPath, DRIVER, ...args], { ...process.env, NO_COLOR: '', ...env }, { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.output);
  return r.output;
}

const rowsOf = (text: string, width: number): number => Math.max(1, Math.ceil(Array.from(text).length / width));

test('the test terminal wraps like xterm and keeps the leftovers of a line that was rewritten after it wrapped', () => {
  const t = new TestTerminal(10).write('0123456789abc\r\x1b[2Kxy\r\n');
  assert.deepEqual(t.lines(), ['0123456789', 'xy']);
  assert.deepEqual(new TestTerminal(10).write('abc\r\n0123456789\r\x1b[Jz').lines(), ['abc', 'z']);
  assert.deepEqual(new TestTerminal(4).write('x\r\nabcdefgh\x1b[1A\r\x1b[2K\x1b[1B\x1b[2K\x1b[1A!').lines(), ['x', '!']);
  assert.deepEqual(new TestTerminal(4).write('abcdefgh\x1b[1A\r\x1b[J!').lines(), ['!']);
  assert.throws(() => new TestTerminal(10).write('\x1b[5n'), /unexpected escape/);
});

for (const width of [40, 80, 200]) {
  test(`in a pty of ${width} columns, 100 updates leave exactly one live line and no leftover row`, { skip: !hasPty && 'no python3 pty' }, async () => {
    const screen = new TestTerminal(width).write(await inPty(width, ['100'])).lines();
    // One line per step (issue 30 item 7): the step's → line is the live line, its wait on it.
    const live = screen.filter((l) => l.includes('7/9 readiness on spark2'));
    assert.equal(live.length, 1, screen.join('\n'));
    assert.equal(screen.at(-1), live[0], 'the live line is the last row');
    assert.ok(Array.from(live[0]!).length <= width - 1, `fits in ${width - 1} columns: ${live[0]}`);
    if (width >= 80) assert.match(live[0]!, /\(probe 100\)|…$/);
    assert.match(live[0]!, width > 40 ? /^→ 7\/9 readiness on spark2 {2}8m20s of 35m00s, / : /^→ 7\/9 readiness on spark2 {2}8m20s of /, 'the newest update');
    assert.equal(screen.length, rowsOf(HEADER, width) + 1, screen.join('\n'));
  });
}

// Items 2, 3: the wait line with the server's phase and the estimate is the same one live line, fitted (not cut) to the width.
for (const width of [40, 80, 200]) {
  test(`in a pty of ${width} columns, 100 phase updates leave one live line with the step, the phase and the time`, { skip: !hasPty && 'no python3 pty' }, async () => {
    const screen = new TestTerminal(width).write(await inPty(width, ['100'], { LIVE_DRIVER_PHASE: '1' })).lines();
    const live = screen.filter((l) => l.startsWith('7/9 readiness on spark2 '));
    assert.equal(live.length, 1, screen.join('\n'));
    assert.equal(screen.at(-1), live[0], 'the live line is the last row');
    assert.ok(Array.from(live[0]!).length <= width - 1, `fits in ${width - 1} columns: ${live[0]}`);
    assert.equal(screen.length, rowsOf(HEADER, width) + 1, screen.join('\n'));
    if (width === 200) assert.equal(live[0], '7/9 readiness on spark2  ▕███████▊      ▏ 55%  loading weights 100/100  8m20s of 35m00s, usually ~15m');
    if (width === 80) assert.equal(live[0], '7/9 readiness on spark2  55%  loading weights 100/100  8m20s of 35m00s');
    if (width === 40) assert.equal(live[0], '7/9 readiness on spark2  loading weigh…');
  });
}

const tmux = spawnSync('tmux', ['-V']).status === 0;

test('in tmux, a resize from 200 to 40 columns in the middle of the wait leaves one live line that fits 40 columns', { skip: !tmux && 'tmux is not installed' }, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-live-'));
  const sock = `pulse-live-${process.pid}`;
  const tm = (...a: string[]) => spawnSync('tmux', ['-L', sock, ...a], { encoding: 'utf8' });
  const done = path.join(dir, 'done');
  const until = async (f: () => boolean, what: string): Promise<void> => {
    for (let i = 0; i < 300 && !f(); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(f(), what);
  };
  try {
    const cmd = `env NO_COLOR= LIVE_DRIVER_LINGER_MS=20000 ${process.execPath} ${DRIVER} 100 50 ${done}`;
    assert.equal(tm('new-session', '-d', '-x', '200', '-y', '30', cmd).status, 0);
    await until(() => existsSync(`${done}.paused`), 'the driver reached update 50');
    assert.equal(tm('resize-window', '-x', '40', '-y', '30').status, 0, 'resize');
    await until(() => existsSync(done), 'the driver finished');
    assert.equal(readFileSync(done, 'utf8'), '40', 'the driver saw the new width');
    // The whole history: what tmux pushed out of reach on the resize (the pre-resize line, once) may stay there.
    const all = tm('capture-pane', '-p', '-S', '-').stdout.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '');
    const copies = all.filter((l) => l.includes('7/9 readiness on spark2'));
    assert.ok(copies.length <= 2, `one live line and at most the pre-resize one:\n${all.join('\n')}`);
    assert.ok(copies.slice(0, -1).every((l) => /4m10s/.test(l)), `only the line drawn before the resize stays behind:\n${all.join('\n')}`);
    // The visible screen: exactly one live line, the newest, cut to fit, last.
    const screen = tm('capture-pane', '-p').stdout.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '');
    const live = screen.filter((l) => l.includes('7/9 readiness on spark2'));
    assert.equal(live.length, 1, screen.join('\n'));
    assert.ok(Array.from(live[0]!).length <= 39, live[0]);
    assert.match(live[0]!, /^→ 7\/9 readiness on spark2 {2}8m20s of 3/);
    assert.equal(screen.at(-1), live[0], screen.join('\n'));
  } finally {
    tm('kill-server');
    rmSync(dir, { recursive: true, force: true });
  }
});

function sink(isTTY: boolean) {
  const out = { text: '', isTTY, write: (s: string) => (out.text += s) };
  return out;
}

test('off a terminal, a simulated 2-minute start prints at most one wait line per phase plus one a minute, and no control character', () => {
  let now = 0;
  const out = sink(false);
  const p = new ProgressPrinter(out, () => now);
  const phases: { step: 'memory' | 'readiness'; name: string; s: number }[] = [
    { step: 'memory', name: '4/9 memory wait on n', s: 25 },
    { step: 'readiness', name: '7/9 readiness on n', s: 130 },
  ];
  for (const ph of phases) {
    p.stepStarted(ph.name);
    for (let i = 0; i <= ph.s; i++) {
      now += 1000;
      p.waitProgress({ step: ph.step, attempt: i + 1, lastAnswer: 'HTTP 503\x1b[31m red\x1b[0m\r\x07', elapsedS: i, timeoutS: 2100 });
    }
    p.stepEnded(ph.name, 'ok', ph.s * 1000, null);
  }
  const waits = out.text.split('\n').filter((l) => l.includes('… '));
  const bound = phases.reduce((n, ph) => n + 1 + Math.floor(ph.s / 60), 0);
  assert.ok(waits.length <= bound, `${waits.length} wait lines > ${bound}:\n${out.text}`);
  assert.deepEqual(waits.map((l) => /… (\w+)/.exec(l)?.[1]), ['memory', 'readiness', 'readiness', 'readiness'], out.text);
  assert.doesNotMatch(out.text, /[\x00-\x09\x0b-\x1f\x7f]/);
  assert.match(waits[0]!, /last answer HTTP 503 red {2}\(probe 1\)/);
});

test('colour only on a terminal and never with NO_COLOR; --quiet shows only the result', () => {
  const tty = sink(true);
  new ProgressPrinter(tty, Date.now, null, { env: {} }).stepEnded('1/9 preflight on n', 'ok', 100, null);
  assert.match(tty.text, /\x1b\[32m✓\x1b\[0m/);
  // A step that completed but cut requests (the drain, the stop): `!` in the warning colour, never a green ✓.
  const cut = sink(true);
  new ProgressPrinter(cut, Date.now, null, { env: {} }).stepEnded('1/2 stop on n', 'warned', 100, 'stopped; cut 1 request in flight');
  assert.doesNotMatch(cut.text, /✓|\x1b\[32m/);
  assert.match(cut.text, /\x1b\[3\dm!\x1b\[0m 1\/2 stop on n \(0\.1s\): stopped; cut 1 request in flight/);
  for (const [out, env] of [[sink(true), { NO_COLOR: '1' }], [sink(false), {}]] as const) {
    new ProgressPrinter(out, Date.now, null, { env }).stepEnded('1/9 preflight on n', 'failed', 100, 'boom');
    assert.equal(out.text, '✗ 1/9 preflight on n (0.1s): failed: boom\n');
  }
  const quiet = sink(false);
  const p = new ProgressPrinter(quiet, Date.now, null, { quiet: true });
  p.progress('up best on n: workflow w');
  p.stepStarted('1/9 preflight on n');
  p.waitProgress({ step: 'readiness', attempt: 1, lastAnswer: '-', elapsedS: 1, timeoutS: 10 });
  p.stepEnded('1/9 preflight on n', 'ok', 100, null);
  p.outcome({ kind: 'closed', status: 'completed', result: null, error: null, errorType: null }, 'up best on n');
  assert.equal(quiet.text, 'up best on n: completed\n');
});
