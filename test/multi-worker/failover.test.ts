/**
 * Two `pulse worker` processes on one real dev server, as two controller hosts would run them: G polls the deploy
 * and the gateway queue (the gateway host), N runs `--no-gateway` (another controller host). Each has its own
 * PULSE_STATE_DIR, so where a state write lands shows which queue it came through. Three deploys to three simulated
 * nodes share the two workers; the worker that runs a readiness step first is SIGKILLed; the other resumes it.
 *
 * When the victim is G, the gateway host is gone too: the state writes wait on pulse-gateway (never done by N)
 * until a new gateway worker starts on G's state dir, as systemd's Restart=on-failure would do. It starts only after
 * N has taken the readiness waits over, so the takeover is N's either way.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fragmentPath } from '../../runtime/gateway/gateway.js';
import { readNodeStateSync } from '../../runtime/state/state.js';
import { GATEWAY_TASK_QUEUE, TASK_QUEUE } from '../../workflows/definitions.js';
import type { DeployResult } from '../../runtime/model/index.js';
import { startRig } from '../engine/rig.js';
import type { Rig } from '../engine/rig.js';
import { quietRuntime } from '../workflows/harness.js';
import { spawnWorker, waitForPolls } from './workers.js';
import { until } from '../helpers/until.js';
import type { WorkerProc } from './workers.js';

const NODES = ['spark1', 'spark2', 'spark3'];

type Line = Record<string, unknown>;
const msg = (l: Line): string => String(l['msg']);
/** Nodes whose readiness wait `w` began (attempt numbers too). */
function readinessWaits(w: WorkerProc): { node: string; attempt: number }[] {
  return w.lines().filter((l) => msg(l).startsWith('readiness wait on ')).map((l) => ({ node: msg(l).slice('readiness wait on '.length), attempt: Number(l['attempt']) }));
}
const stateWrites = (w: WorkerProc): Line[] => w.lines().filter((l) => /^state \w+ for /.test(msg(l)));
const nodeSteps = (w: WorkerProc): Line[] => w.lines().filter((l) => l['sdkComponent'] === 'activity' && l['taskQueue'] === TASK_QUEUE);

describe('two workers: failover of a readiness step, state written on the gateway host only', () => {
  let rig: Rig;
  let otherDir: string;
  const workers: WorkerProc[] = [];

  before(async () => {
    quietRuntime();
    otherDir = mkdtempSync(path.join(os.tmpdir(), 'pulse-no-gateway-'));
    rig = await startRig(NODES);
    // The simulated servers hold their listen until the survivor has taken the killed worker's readiness waits over,
    // so the readiness steps still run at the kill and after it, however long the takeover takes on the machine.
    for (const node of NODES) rig.sim.node(node).setControl({ holdReady: true });
  });
  after(async () => {
    for (const w of workers) await w.kill('SIGKILL');
    await rig?.close();
    rmSync(otherDir, { recursive: true, force: true });
  });

  const start = async (args: string[], stateDir: string, queues: string[]): Promise<WorkerProc> => {
    const w = spawnWorker(args, { TEMPORAL_ADDRESS: rig.server.address, PULSE_STATE_DIR: stateDir, PULSE_NODES: rig.nodesJson, PULSE_SSH_CONFIG: rig.sim.sshConfigPath });
    workers.push(w);
    await waitForPolls(rig.client, w, queues);
    return w;
  };

  it('the survivor finishes every deploy; one start.sh per node; every state write in the gateway state dir', { timeout: 150_000 }, async (t) => {
    const [g, n] = await Promise.all([start([], rig.stateDir, [TASK_QUEUE, GATEWAY_TASK_QUEUE]), start(['--no-gateway'], otherDir, [TASK_QUEUE])]);
    assert.ok(n.lines().some((l) => msg(l).startsWith(`not polling ${GATEWAY_TASK_QUEUE}`)), n.stderr());
    const handles = await Promise.all(NODES.map((node) => rig.start(rig.upPlan(node, 'best'))));
    const results = handles.map((h) => h.result() as Promise<DeployResult>);
    results.forEach((r) => r.catch(() => undefined)); // awaited below; a failure must not be unhandled meanwhile

    await until('a readiness step to start', () => readinessWaits(g).length + readinessWaits(n).length > 0, 90_000);
    const victim = readinessWaits(g).length > 0 ? g : n;
    const survivor = victim === g ? n : g;
    await victim.kill('SIGKILL');
    const held = readinessWaits(victim).map((r) => r.node);
    t.diagnostic(`SIGKILLed the ${victim === g ? 'gateway' : '--no-gateway'} worker during the readiness of ${held.join(', ')}`);
    // Temporal notices the dead worker by its missing heartbeats (the wait's heartbeat timeout) and hands the waits to
    // the survivor; the servers listen from then on.
    await until(`${victim === g ? 'N' : 'G'} to resume the readiness waits`, () => held.every((node) => readinessWaits(survivor).some((r) => r.node === node && r.attempt > 1)), 90_000);
    for (const node of NODES) rig.sim.node(node).setControl({ holdReady: false });
    if (victim === g) await start([], rig.stateDir, [TASK_QUEUE, GATEWAY_TASK_QUEUE]);

    const done = await Promise.all(results);
    for (const r of done) assert.equal(r.ok, true, `${r.node}: ${r.error ?? ''}`);
    for (const node of held) {
      assert.ok(readinessWaits(survivor).some((r) => r.node === node && r.attempt > 1), `the survivor resumed ${node}'s readiness wait`);
    }
    assert.ok(nodeSteps(g).length > 0 && nodeSteps(n).length > 0, 'both controller hosts ran node steps');

    for (const node of NODES) {
      assert.equal(rig.sim.node(node).startShCalls().length, 1, `${node}: exactly one start.sh run`);
      assert.equal(readNodeStateSync(rig.stateDir, node)?.state, 'up', `${node}: state up on the gateway host`);
    }
    assert.ok(existsSync(fragmentPath(rig.stateDir)), 'the gateway file on the gateway host');
    assert.deepEqual(readdirSync(otherDir), [], 'nothing written in the --no-gateway worker state dir');
    assert.equal(stateWrites(n).length, 0, 'no state write ran on the --no-gateway worker');
    const gatewayWrites = workers.filter((w) => w !== n).flatMap(stateWrites);
    assert.ok(gatewayWrites.every((l) => l['taskQueue'] === GATEWAY_TASK_QUEUE));
    assert.ok(gatewayWrites.length >= NODES.length, 'the final publishes, by a gateway worker');
  });
});
