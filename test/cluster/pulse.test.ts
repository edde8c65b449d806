/**
 * pulse end to end against the production-shaped server (test/helpers/cluster.ts: PostgreSQL, the built
 * temporal-server on deploy/native/temporal.yaml), through `node bin/pulse-cli` with --temporal / TEMPORAL_ADDRESS
 * and the simulator's sshd nodes, as an operator runs it: up, a same-identity up, --restart, history (UI links from
 * PULSE_TEMPORAL_UI / --temporal-ui, and how to get them without), down, status's deploy column and cancel under a
 * `pulse worker`, a CLI SIGKILLed during readiness resumed by `watch`, and two workers with the one running a
 * readiness wait SIGKILLed. Each deploy ends ok or failed-and-compensated with exactly one start.sh.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { GATEWAY_TASK_QUEUE, TASK_QUEUE } from '../../workflows/definitions.js';
import { startCluster } from '../helpers/cluster.js';
import type { Cluster } from '../helpers/cluster.js';
import { removeDir, runCli, simCliEnv, startCli, tempDir, waitForOutput } from '../helpers/cli.js';
import { spawnWorker, waitForPolls } from '../multi-worker/workers.js';
import { until } from '../helpers/until.js';
import type { WorkerProc } from '../multi-worker/workers.js';
import { startSim } from '../sim/index.js';
import type { Sim } from '../sim/index.js';

const NODES = ['spark1', 'spark2', 'spark3'];

describe('pulse against the PostgreSQL-backed Temporal server', () => {
  let cluster: Cluster;
  let sim: Sim;
  let dir = '';
  let env: NodeJS.ProcessEnv = {};
  let connection: Connection;
  let client: Client;
  const workers: WorkerProc[] = [];
  const stateDir = () => path.join(dir, 'state');

  before(async () => {
    dir = await tempDir('pulse-cluster-e2e-');
    [cluster, sim] = await Promise.all([startCluster(), startSim({ nodes: NODES, readyDelayMs: 300 })]);
    // TEMPORAL_ADDRESS set, PULSE_TEMPORAL_UI not: a configured server whose UI pulse does not know.
    env = { ...(await simCliEnv(sim, dir)), TEMPORAL_ADDRESS: cluster.address, TEMPORAL_NAMESPACE: cluster.namespace, PULSE_TEMPORAL_UI: '' };
    connection = await Connection.connect({ address: cluster.address });
    client = new Client({ connection, namespace: cluster.namespace });
  });
  after(async () => {
    for (const w of workers) await w.kill('SIGKILL');
    await connection?.close();
    await sim?.stop();
    await cluster?.stop();
    await removeDir(dir);
  });

  const nodeState = (node: string): { state: string } => JSON.parse(readFileSync(path.join(stateDir(), 'nodes', `${node}.json`), 'utf8'));
  const endpointEnabled = (node: string): boolean | undefined => {
    const f = JSON.parse(readFileSync(path.join(stateDir(), 'gateway-backends.json'), 'utf8')) as { models: { endpoints: { name: string; enabled: boolean }[] }[] };
    return f.models[0]?.endpoints.find((e) => e.name === node)?.enabled;
  };
  const steps = (out: string): string[] => [...out.matchAll(/→ (\d)\/9 /g)].map((m) => m[1]!);
  const startWorker = async (args: string[], state: string, queues: string[]): Promise<WorkerProc> => {
    const w = spawnWorker(args, { ...(env as Record<string, string>), PULSE_STATE_DIR: state, PULSE_SSH_CONFIG: sim.sshConfigPath });
    workers.push(w);
    await waitForPolls(client, w, queues);
    return w;
  };

  it('up (--temporal) reaches a verified server; the follow output says how to get a UI link', async () => {
    const r = await runCli(['--temporal', cluster.address, 'model', 'up', 'best', '--node', 'spark1'], { ...env, TEMPORAL_ADDRESS: '' });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /running one in this process until the deploy ends/);
    assert.deepEqual(steps(r.stdout), ['1', '2', '3', '4', '5', '6', '7', '8', '9']);
    assert.match(r.stdout, /up best on spark1: ok, node up/);
    assert.match(r.stdout, /no Temporal UI link: set PULSE_TEMPORAL_UI \(or --temporal-ui\)/);
    assert.equal(nodeState('spark1').state, 'up');
    assert.equal(endpointEnabled('spark1'), true);
    assert.equal(sim.node('spark1').startShCalls().length, 1);
    assert.equal(existsSync(path.join(stateDir(), 'temporal', 'server.json')), false, 'no embedded server was started');
  });

  it('up again with the same identity runs only steps 1, 7, 8, 9; --restart runs them all and start.sh once more', async () => {
    const same = await runCli(['model', 'up', 'best', '--node', 'spark1'], env);
    assert.equal(same.code, 0, same.stdout + same.stderr);
    assert.deepEqual(steps(same.stdout), ['1', '7', '8', '9']);
    assert.equal(sim.node('spark1').startShCalls().length, 1, 'no second start.sh');
    const restart = await runCli(['model', 'up', 'best', '--node', 'spark1', '--restart'], env);
    assert.equal(restart.code, 0, restart.stdout + restart.stderr);
    assert.deepEqual(steps(restart.stdout), ['1', '2', '3', '4', '5', '6', '7', '8', '9']);
    assert.equal(sim.node('spark1').startShCalls().length, 2);
  });

  it('history lists the deploys from PostgreSQL visibility, with UI links once the UI base is set', async () => {
    const plain = await runCli(['model', 'history', '--node', 'spark1'], env);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout.match(/up best on spark1\s+\S+\s+ok, node up/g)?.length, 3, plain.stdout);
    // one line a deploy; the workflow ID (no UI base yet) and the hint only in the wide view
    assert.doesNotMatch(plain.stdout, /^ {4}pulse-model-spark1$/m);
    const wide = await runCli(['model', 'history', '--node', 'spark1', '--wide'], env);
    assert.match(wide.stdout, /^ {4}pulse-model-spark1$/m);
    assert.match(wide.stdout, /no Temporal UI link: set PULSE_TEMPORAL_UI/);
    const rows = JSON.parse((await runCli(['model', 'history', '--node', 'spark1', '--json'], { ...env, PULSE_TEMPORAL_UI: 'http://ui.example:8080/' })).stdout) as { runId: string; ui: string }[];
    assert.equal(rows[0]?.ui, `http://ui.example:8080/namespaces/default/workflows/pulse-model-spark1/${rows[0]?.runId}/history`);
    const flag = await runCli(['--temporal-ui', 'http://other.example:8233', 'model', 'history', '--node', 'spark1', '--limit', '1', '--wide'], env);
    assert.match(flag.stdout, /^ {4}http:\/\/other\.example:8233\/namespaces\/default\/workflows\/pulse-model-spark1\/[0-9a-f-]+\/history$/m);
    assert.doesNotMatch(flag.stdout, /no Temporal UI link/);
  });

  it('down stops the server; the node state says down', async () => {
    const r = await runCli(['model', 'down', '--node', 'spark1'], env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /down on spark1: ok, node down/);
    assert.equal(nodeState('spark1').state, 'down');
    assert.equal(sim.node('spark1').containers().filter((c) => c.State.Running).length, 0);
  });

  it('under `pulse worker`: status shows the deploy in progress, cancel compensates it', async () => {
    const worker = await startWorker([], stateDir(), [TASK_QUEUE, GATEWAY_TASK_QUEUE]);
    sim.node('spark2').setReadyDelay(120_000);
    const up = await runCli(['model', 'up', 'datagen', '--node', 'spark2', '--detach'], env);
    assert.equal(up.code, 0, up.stdout + up.stderr);
    assert.match(up.stdout, /started up datagen on spark2: workflow pulse-model-spark2/);
    const follow = startCli(['model', 'watch', '--node', 'spark2'], env);
    await waitForOutput(follow, /→ 7\/9 readiness on spark2/);
    const status = await runCli(['model', 'status', '--node', 'spark2', '--no-http'], env);
    const row = status.stdout.split('\n').find((l) => l.startsWith('spark2 '));
    assert.match(row ?? '', /up 7\/9 readiness( \d+%)?\s*$/, status.stdout); // n/9 and the wait (issue 18)
    assert.match(status.stdout, /deploy\s+pulse-model-spark2 up datagen step readiness/);
    const c = await runCli(['model', 'cancel', '--node', 'spark2'], env);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    const w = await follow.done;
    assert.notEqual(w.code, 0);
    assert.match(w.stdout, /up datagen on spark2: CANCELLED, node failed: readiness: deploy cancelled/);
    assert.doesNotMatch(w.stdout, /running one in this process/);
    assert.equal(nodeState('spark2').state, 'failed');
    assert.equal(endpointEnabled('spark2'), false);
    assert.equal(sim.node('spark2').startShCalls().length, 1);
    sim.node('spark2').setReadyDelay(300);
    await worker.kill('SIGTERM');
  });

  it('a CLI SIGKILLed during readiness is resumed by the next pulse: watch finishes it, start.sh ran once', async () => {
    const node = sim.node('spark3');
    node.setReadyDelay(4000);
    const up = startCli(['model', 'up', 'datagen', '--node', 'spark3'], env);
    await waitForOutput(up, /→ 7\/9 readiness on spark3/);
    up.child.kill('SIGKILL');
    await up.done;
    const w = await runCli(['model', 'watch', '--node', 'spark3'], env);
    assert.equal(w.code, 0, w.stdout + w.stderr);
    assert.match(w.stdout, /running one in this process/);
    assert.match(w.stdout, /up datagen on spark3: ok, node up/);
    assert.equal(node.startShCalls().length, 1, 'exactly one start.sh run for the deploy');
    assert.equal(nodeState('spark3').state, 'up');
    node.setReadyDelay(300);
  });

  it('two workers: the one in a readiness wait is SIGKILLed, the other finishes both deploys', { timeout: 240_000 }, async (t) => {
    const other = mkdtempSync(path.join(os.tmpdir(), 'pulse-no-gateway-'));
    try {
      const [g, n] = await Promise.all([startWorker([], stateDir(), [TASK_QUEUE, GATEWAY_TASK_QUEUE]), startWorker(['--no-gateway'], other, [TASK_QUEUE])]);
      const targets = ['spark1', 'spark2'];
      const starts = targets.map((x) => sim.node(x).startShCalls().length);
      // The servers hold their listen until the survivor has taken the killed worker's waits over (after the wait's
      // heartbeat timeout), however long that takes on the machine.
      for (const x of targets) sim.node(x).setControl({ holdReady: true });
      for (const x of targets) {
        const r = await runCli(['model', 'up', 'best', '--node', x, '--detach'], env);
        assert.equal(r.code, 0, r.stdout + r.stderr);
      }
      const waits = (w: WorkerProc): string[] => w.lines().map((l) => String(l['msg'])).filter((m) => m.startsWith('readiness wait on ')).map((m) => m.slice('readiness wait on '.length));
      await until('a readiness wait to start', () => waits(g).length + waits(n).length > 0, 90_000);
      const victim = waits(g).length > 0 ? g : n;
      const held = waits(victim);
      const survivor = victim === g ? n : g;
      const before = waits(survivor).length;
      await victim.kill('SIGKILL');
      t.diagnostic(`SIGKILLed the ${victim === g ? 'gateway' : '--no-gateway'} worker during the readiness of ${held.join(', ')}`);
      await until(`${victim === g ? 'N' : 'G'} to resume the readiness waits`, () => held.every((x) => waits(survivor).slice(before).includes(x)), 120_000);
      for (const x of targets) sim.node(x).setControl({ holdReady: false });
      if (victim === g) {
        // The gateway host's worker comes back (systemd Restart=on-failure) once N has taken the waits over.
        await startWorker([], stateDir(), [TASK_QUEUE, GATEWAY_TASK_QUEUE]);
      }
      for (const x of targets) {
        const w = await runCli(['model', 'watch', '--node', x], env);
        assert.equal(w.code, 0, w.stdout + w.stderr);
        assert.match(w.stdout, new RegExp(`up best on ${x}: ok, node up`));
        assert.doesNotMatch(w.stdout, /running one in this process/, 'the surviving workers ran it');
        assert.equal(sim.node(x).startShCalls().length, starts[targets.indexOf(x)]! + 1, `${x}: exactly one start.sh`);
        assert.equal(nodeState(x).state, 'up');
      }
      assert.ok(held.every((x) => waits(survivor).includes(x)), 'the survivor resumed the killed worker\'s readiness waits');
    } finally {
      for (const x of ['spark1', 'spark2']) sim.node(x).setControl({ holdReady: false });
      rmSync(other, { recursive: true, force: true });
    }
  });
});
