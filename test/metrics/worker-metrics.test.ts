/**
 * `pulse worker --metrics` as an operator runs it (a child process, stderr a pipe), on a real dev server and the
 * simulator: an up and a down, then one scrape of /metrics shows pulse's counters and histograms moved and the
 * Temporal SDK's own worker metrics; the worker's log (stderr) is JSON lines, the activity lines carry the workflow ID,
 * and neither stdout nor stderr holds a secret from the node's .env.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../sim/ports.js';
import { startRig, SECRETS } from '../engine/rig.js';
import type { Rig } from '../engine/rig.js';
import { quietRuntime } from '../workflows/harness.js';
import { GATEWAY_TASK_QUEUE, TASK_QUEUE, workflowIdFor } from '../../workflows/definitions.js';
import type { DeployResult } from '../../runtime/model/index.js';
import { spawnWorker, waitForPolls } from '../multi-worker/workers.js';
import type { WorkerProc } from '../multi-worker/workers.js';

/** The value of one sample line `name{labels} value` in Prometheus text, or null. */
function sample(text: string, name: string, labels = ''): number | null {
  const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`^${esc(name)}${labels ? `\\{${esc(labels)}\\}` : ''} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

describe('pulse worker: metrics and structured logs', () => {
  let rig: Rig;
  let worker: WorkerProc;
  let metricsUrl: string;

  before(async () => {
    quietRuntime();
    rig = await startRig(['spark1']);
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    worker = spawnWorker(['--metrics', `127.0.0.1:${port}`], { TEMPORAL_ADDRESS: rig.server.address, PULSE_STATE_DIR: rig.stateDir, PULSE_NODES: rig.nodesJson, PULSE_SSH_CONFIG: rig.sim.sshConfigPath });
    await waitForPolls(rig.client, worker, [TASK_QUEUE, GATEWAY_TASK_QUEUE]);
  });
  after(async () => {
    await worker?.kill('SIGKILL');
    await rig?.close();
  });

  it('an up and a down move pulse_* and the scrape also holds temporal_* worker metrics', { timeout: 180_000 }, async () => {
    const up = (await (await rig.start(rig.upPlan('spark1', 'best'))).result()) as DeployResult;
    assert.equal(up.ok, true);
    const down = (await (await rig.start(rig.downPlan('spark1'))).result()) as DeployResult;
    assert.equal(down.ok, true);

    const res = await fetch(metricsUrl);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.equal(sample(text, 'pulse_deploys_total', 'action="up",result="ok"'), 1, text);
    assert.equal(sample(text, 'pulse_deploys_total', 'action="down",result="ok"'), 1);
    for (const step of ['preflight', 'mkdir', 'memory', 'write-env', 'start', 'readiness', 'verify']) {
      assert.equal(sample(text, 'pulse_step_duration_seconds_count', `step="${step}"`), 1, step);
    }
    assert.equal(sample(text, 'pulse_step_duration_seconds_count', 'step="stop"'), 2, 'stop: one in up, one in down');
    assert.equal(sample(text, 'pulse_step_duration_seconds_count', 'step="publish"'), 3, "publish: 'starting', 'up', 'down'");
    assert.equal(sample(text, 'pulse_readiness_wait_seconds_count'), 1);
    assert.ok((sample(text, 'pulse_readiness_wait_seconds_sum') ?? -1) > 0, 'the readiness wait took time');
    // The SDK's own exporter: activity counters of both queues, served through the same address.
    assert.match(text, /^temporal_activity_execution_latency\w*\{[^}]*task_queue="pulse-deploy"/m);
    assert.match(text, /^temporal_activity_execution_latency\w*\{[^}]*task_queue="pulse-gateway"/m);
    assert.match(text, /^temporal_workflow_completed\w*\{[^}]*workflow_type="upWorkflow"/m);
  });

  it('the log on stderr is JSON lines; activity lines carry the workflow ID; no secret in the output', async () => {
    worker.child.kill('SIGTERM');
    const exit = await worker.exited;
    assert.equal(exit.code, 0, `graceful stop:\n${worker.stderr()}`);
    const lines = worker.lines(); // throws on a line that is not JSON
    assert.ok(lines.length > 10, worker.stderr());
    assert.equal(worker.stdout(), '', 'nothing but the log, and that on stderr');
    for (const l of lines) {
      assert.equal(typeof l['time'], 'string');
      assert.equal(typeof l['level'], 'string');
      assert.equal(typeof l['msg'], 'string');
      assert.equal(l['taskToken'], undefined, 'task tokens are left out');
    }
    const id = workflowIdFor('spark1');
    const steps = lines.filter((l) => /^(preflight|mkdir|stop|memory wait|write \.env|start|readiness wait|verify) on spark1$/.test(String(l['msg'])));
    assert.ok(steps.length >= 8, `the step lines: ${JSON.stringify(steps)}`);
    for (const l of steps) {
      assert.equal(l['workflowId'], id, JSON.stringify(l));
      assert.equal(typeof l['activityType'], 'string');
    }
    const published = lines.filter((l) => String(l['msg']).startsWith('state ') && l['taskQueue'] === GATEWAY_TASK_QUEUE);
    assert.ok(published.length >= 3, 'state writes logged by the gateway queue, with their workflow ID');
    for (const l of published) assert.equal(l['workflowId'], id);
    assert.ok(lines.some((l) => l['msg'] === `polling task queue ${GATEWAY_TASK_QUEUE} on ${rig.server.address} (namespace default)`));
    assert.ok(!lines.some((l) => String(l['msg']).startsWith('No workflows registered')), 'the gateway worker is activity-only on purpose');
    for (const secret of Object.values(SECRETS)) {
      assert.equal(worker.stdout().includes(secret), false, 'secret on stdout');
      assert.equal(worker.stderr().includes(secret), false, 'secret on stderr');
    }
  });
});
