/**
 * `status --json`'s `health.ok` is the health the table shows: false with a dead engine (/health 503 while
 * /v1/models still answers), so a script reading `.health.ok` does not believe a dead server; `modelsOk` keeps the
 * /v1/models answer alone.
 *
 * `status` while a node does not answer, through the CLI in a pseudo-terminal at 80x24 on three simulated nodes:
 * spark3's sshd accepts connections but never talks (frozen). status names the node it waits for and what for while
 * it waits (no blank screen), the table then shows the two nodes that answered and spark3 unreachable "within N s",
 * and the command ends within that bound (it used to sit until ssh2's own 20 s connect timeout, whatever N was).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CLI } from '../helpers/cli.js';
import type { StatusReport } from '../../runtime/status/types.js';
import { TestTerminal } from '../helpers/term.js';
import { hasPty, runInPty } from '../helpers/pty.js';
import { runSimCli, saveState, settleRequests, startServer, startStatusSim, writePulseEnv } from './sim-helpers.js';
import type { StatusSim } from './sim-helpers.js';

let s: StatusSim;
const ptyEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ ...process.env, ...s.sim.env(), PULSE_STATE_DIR: s.stateDir, TEMPORAL_ADDRESS: '', NO_COLOR: '', ...extra });

before(async () => {
  s = await startStatusSim(3, { protected: [] });
  for (const n of s.sim.nodes.slice(0, 2)) {
    writePulseEnv(n);
    startServer(n);
    await settleRequests(n);
  }
  s.sim.node('spark3').freezeSshd();
});
after(async () => {
  s?.sim.node('spark3').freezeSshd(false);
  await s?.stop();
});

test('status --json: health.ok is false while /health answers 503 (a dead engine), as the verdict says', async () => {
  const node = s.sim.node('spark1');
  node.setControl({ engineDead: true });
  try {
    const r = await runSimCli(s, ['model', 'status', '--json', '--node', 'spark1']);
    const h = (JSON.parse(r.stdout) as StatusReport).nodes[0]!.health;
    assert.equal(r.code, 7, r.stdout);
    assert.deepEqual([h.httpStatus, h.healthRoute, h.modelsOk, h.ok], [200, 503, true, false], JSON.stringify(h));
    assert.match(h.detail ?? '', /GET \/health answered 503/);
  } finally {
    node.setControl({ engineDead: false });
  }
  const alive = await runSimCli(s, ['model', 'status', '--json', '--node', 'spark1']);
  const h = (JSON.parse(alive.stdout) as StatusReport).nodes[0]!.health;
  assert.deepEqual([h.httpStatus, h.healthRoute, h.modelsOk, h.ok], [200, 200, true, true], JSON.stringify(h));
});

test('status shows the watchdog\'s notes in text: why its last check did not heal', async () => {
  const noHeal = "no heal while the node's Docker daemon does not answer: an up cannot start a container; start the daemon (systemctl start docker)";
  await saveState(s.stateDir, 'spark2', {
    watchdog: {
      at: new Date().toISOString(), verdict: 'down', reason: 'the Docker daemon does not answer', judged: 'down', since: new Date().toISOString(),
      streak: 3, sinceHeal: 3, disabled: null, heals: [], healsTotal: 0, gaveUp: null, notes: [noHeal], restartCount: null,
    },
  });
  try {
    const r = await runSimCli(s, ['model', 'status', '--node', 'spark2'], { COLUMNS: '400' });
    assert.match(r.stdout, /^ {2}watchdog +down since \d\d:\d\d, 3 checks: the Docker daemon does not answer; note: no heal while the node's Docker daemon does not answer: /m, r.stdout);
  } finally {
    await saveState(s.stateDir, 'spark2');
  }
});

test('status names the node it waits for while it waits, and keeps the bound it names', { skip: !hasPty && 'no python3 pty' }, async () => {
  const boundS = 5;
  const t0 = Date.now();
  const run = await runInPty(80, 24, [process.execPath, CLI, '--nodes', s.nodesFile, 'model', 'status'], ptyEnv({ PULSE_STATUS_TIMEOUT_S: String(boundS) }));
  const tookMs = Date.now() - t0;
  assert.equal(run.code, 6, run.output);
  // while it waited: one line naming spark3, what it waits for and the bound, and the nodes already done
  const plain = run.output.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
  assert.match(plain, /waiting for spark3 \(connecting, \d s of at most 5 s\); done: spark\d, spark\d/, plain);
  const screen = new TestTerminal(80).write(run.output).lines();
  const text = screen.join('\n');
  assert.doesNotMatch(text, /waiting for/, `the line is gone once the table is there:\n${text}`);
  assert.match(screen[0] ?? '', /^NODE +HEALTH/, text);
  assert.match(text, /^spark1 +serving/m);
  assert.match(text, /^spark3 +unreachable/m);
  assert.match(text, new RegExp(`spark3: connect: no answer within ${boundS} s`));
  // the CLI's own start-up and the two nodes' scripts come on top of the bound; ssh2's 20 s connect timeout must not
  assert.ok(tookMs < (boundS + 8) * 1000, `status took ${tookMs} ms for a ${boundS} s bound`);
});
