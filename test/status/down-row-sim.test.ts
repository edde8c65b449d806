/**
 * The rows of `status` at the moments an operator must act, through the CLI on two simulated nodes:
 * - a server that died under a node state that still says up (`down`) keeps its endpoint enabled in the gateway
 *   file: the line under the table warns that the gateway still sends it traffic, and gives the next command (its
 *   log, then an up of the profile that ran), as the failure block of an up gives one;
 * - a failed node gives its next command too (the failed start's log, then the rollback's dry-run);
 * - PROFILE is what runs: with no running container the .env's profile says so (`best (.env; not running)`);
 * - with no endpoint that can be enabled, the first node stays enabled by the fallback, with a warning (RUNTIME.md).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runSimCli, saveState, settleRequests, startServer, startStatusSim, writePulseEnv } from './sim-helpers.js';
import type { StatusSim } from './sim-helpers.js';

let s: StatusSim;
/** Wide enough that no line under the table wraps. */
const WIDE = { COLUMNS: '200' };

before(async () => {
  s = await startStatusSim(2, { protected: [] });
  for (const n of s.sim.nodes) writePulseEnv(n);
  const a = s.sim.node('spark1');
  startServer(a);
  await settleRequests(a);
  await saveState(s.stateDir, 'spark1');
  await saveState(s.stateDir, 'spark2', { state: 'failed', error: 'readiness: the server did not answer within 60 s' });
  // the gateway file as the last up wrote it: spark1 (state up) enabled, spark2 disabled
  const f = await runSimCli(s, ['model', 'fragment']);
  assert.equal(f.code, 0, f.stdout + f.stderr);
  a.docker('stop', '-t', '1', a.containerName);
});
after(async () => {
  await s?.stop();
});

test('a down node whose endpoint stays enabled warns, and every down/failed row has a next command; PROFILE says the .env is not running', async () => {
  const r = await runSimCli(s, ['model', 'status'], WIDE);
  assert.equal(r.code, 7, r.stdout + r.stderr);
  assert.match(r.stdout, /^spark1 +down +enabled +exited +best \(\.env; not running\) /m, r.stdout);
  assert.match(r.stdout, /^spark2 +failed +disabled: \S+ +none +best \(\.env; not running\) /m, r.stdout);
  const text = r.stdout;
  assert.match(text, /^ +warning: endpoint enabled: the gateway still sends it traffic and no server answers/m, r.stdout);
  assert.match(text, /^ +next: pulse model logs --node spark1 \(why it stopped\), then pulse model up best --node spark1$/m, r.stdout);
  assert.match(text, /^ +next: pulse model logs --node spark2 --deploy \(the failed start\), then pulse model rollback --node spark2 --dry-run$/m, r.stdout);
  // the detail view gives the same next command
  const d = await runSimCli(s, ['model', 'status', '--node', 'spark1'], WIDE);
  assert.match(d.stdout, /^ {2}next +pulse model logs --node spark1 \(why it stopped\), then pulse model up best --node spark1$/m, d.stdout);
});

test('with no endpoint that can be enabled, the first node stays enabled by the fallback, with a warning', async () => {
  await saveState(s.stateDir, 'spark1', { state: 'down', action: 'down', profile: null });
  const f = await runSimCli(s, ['model', 'fragment']);
  assert.equal(f.code, 0, f.stdout + f.stderr);
  const r = await runSimCli(s, ['model', 'status'], WIDE);
  assert.match(r.stdout, /^spark1 +stopped +fallback: down /m, r.stdout);
  assert.match(r.stdout, /^spark1 +warning: endpoint kept enabled by the fallback: state down since \S+ \(the gateway rejects a model with no enabled endpoint\)$/m, r.stdout);
});
