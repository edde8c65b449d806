/**
 * The watchdog's check (issue 16) against simulated nodes over real sshd, the way watchdogProbe runs it (the status
 * script with runtime/fleet/watchdog.ts watchdogStatusRequest, checkOf, judge): a live server is ok; a dead engine whose
 * API server still answers (/health 503, /v1/models 200) is down, with the reason; a protected node without --yes
 * gets no HTTP request at all, neither /health nor /v1/models. The HTTP requests run on the node (curl in status.sh).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadNodesConfig, type NodesConfig } from '../../runtime/config/nodes.js';
import { openSession } from '../../runtime/node/connect.js';
import { statusOfNode } from '../../runtime/status/collect.js';
import { readNodeStateSync } from '../../runtime/state/state.js';
import { checkOf, judge, watchdogStatusRequest, type Judgement } from '../../runtime/fleet/watchdog.js';
import type { WatchdogCheck } from '../../runtime/model/index.js';
import type { RequestRecord } from '../sim/node-records.js';
import { saveState, settleRequests, startServer, startStatusSim, writePulseEnv, type StatusSim } from './sim-helpers.js';

let s: StatusSim;
let config: NodesConfig;
let sshBefore: string | undefined;

async function check(node: string, confirmed = false): Promise<{ check: WatchdogCheck; judgement: Judgement }> {
  const st = await statusOfNode(config, node, watchdogStatusRequest({ node, confirmed }), { open: openSession, stateDir: s.stateDir });
  const c = checkOf(st);
  return { check: c, judgement: judge(c, readNodeStateSync(s.stateDir, node)) };
}

/** Polls (generous deadline) until `node`'s request log past `from` holds `want`; the sim logs a request after its answer. */
async function requestsSince(node: string, from: number, want: (r: RequestRecord[]) => boolean): Promise<RequestRecord[]> {
  const n = s.sim.node(node);
  for (let i = 0; i < 1200; i++) {
    const got = n.requests().slice(from);
    if (want(got)) return got;
    await new Promise((r) => setTimeout(r, 50));
  }
  return n.requests().slice(from);
}

describe('the watchdog check on simulated nodes: /health and /v1/models, asked on the node', () => {
  before(async () => {
    s = await startStatusSim(2);
    sshBefore = process.env.PULSE_SSH_CONFIG;
    process.env.PULSE_SSH_CONFIG = s.sim.sshConfigPath;
    config = loadNodesConfig(s.nodesFile);
    for (const name of ['spark1', 'spark2']) {
      const n = s.sim.node(name);
      writePulseEnv(n);
      startServer(n);
      await settleRequests(n);
      await saveState(s.stateDir, name);
    }
  });
  after(async () => {
    if (sshBefore === undefined) delete process.env.PULSE_SSH_CONFIG;
    else process.env.PULSE_SSH_CONFIG = sshBefore;
    await s?.stop();
  });

  test('a live engine is ok: /health 200 and /v1/models serve the recorded model', async () => {
    const from = s.sim.node('spark2').requests().length;
    const { check: c, judgement } = await check('spark2');
    assert.equal(c.http, true);
    assert.equal(c.healthRoute, 200);
    assert.deepEqual(judgement, { verdict: 'ok', reason: null, notes: [] });
    const reqs = await requestsSince('spark2', from, (r) => r.some((x) => x.path === '/health'));
    assert.deepEqual(reqs.map((r) => `${r.method} ${r.path} ${r.status}`).sort(), ['GET /health 200', 'GET /v1/models 200']);
  });

  test('a dead engine (/health 503 while /v1/models answers 200) is down: "engine not healthy: /health 503"', async () => {
    const n = s.sim.node('spark2');
    n.setControl({ engineDead: true });
    try {
      const from = n.requests().length;
      const { check: c, judgement } = await check('spark2');
      assert.equal(c.healthOk, true, '/v1/models alone would call it healthy');
      assert.equal(c.healthRoute, 503);
      assert.equal(judgement.verdict, 'down');
      assert.equal(judgement.reason, 'engine not healthy: /health 503');
      const reqs = await requestsSince('spark2', from, (r) => r.some((x) => x.path === '/health'));
      assert.ok(reqs.some((r) => r.path === '/v1/models' && r.status === 200), JSON.stringify(reqs));
      assert.ok(reqs.some((r) => r.path === '/health' && r.status === 503), JSON.stringify(reqs));
    } finally {
      n.setControl({ engineDead: false });
    }
    assert.equal((await check('spark2')).judgement.verdict, 'ok', 'the engine back: ok again');
  });

  test('a protected node without --yes: no HTTP request at all (judged by its container); with --yes both are asked', async () => {
    const n = s.sim.node('spark1');
    n.setControl({ engineDead: true });
    const from = n.requests().length;
    const { check: c, judgement } = await check('spark1', false);
    assert.equal(c.http, false);
    assert.equal(c.healthRoute, null);
    assert.match(c.httpSkipped ?? '', /protected node, no HTTP request without --yes/);
    assert.equal(judgement.verdict, 'ok');
    assert.deepEqual(n.requests().slice(from), [], 'spark1 got no request');
    const yes = await check('spark1', true);
    assert.equal(yes.judgement.reason, 'engine not healthy: /health 503', 'with --yes at `on` it is asked');
    const reqs = await requestsSince('spark1', from, (r) => r.some((x) => x.path === '/health'));
    assert.deepEqual(reqs.map((r) => `${r.path} ${r.status}`).sort(), ['/health 503', '/v1/models 200'], 'only the run with --yes asked');
  });
});
