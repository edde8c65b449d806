/**
 * Upgrading pulse while deploys run (Worker Versioning, worker/versioning.ts), on a real dev server with the real
 * activities on simulated nodes. Builds A, B, C, D are the real workflow bundle and copies with a harmless
 * difference (so each has its own build id). Proven from the server's own records (the pinned version in
 * describe, the worker identity on every task in history):
 * 1. a deploy started on A keeps all its remaining workflow and activity tasks on A after B comes up and becomes
 *    current, while a new deploy runs on B;
 * 2. the rolling procedure: C comes up, B stops only after its running deploy ended there;
 * 3. a deploy whose build lost its last worker waits (the newer build never takes it; watch says so), and
 *    finishes when that build's worker comes back — which serves it without taking new deploys back from the
 *    running current build; once the current build's last worker is gone, a starting older build does take over.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { pinnedBuildNote, unservedPinnedBuild } from '../../cli/deploy-client/index.js';
import type { DeployResult } from '../../runtime/model/index.js';
import { WORKFLOW_BUNDLE_PATH } from '../../worker/main.js';
import type { PulseWorker } from '../../worker/main.js';
import { DEPLOYMENT_NAME } from '../../worker/versioning.js';
import { startRig } from '../engine/rig.js';
import type { Rig } from '../engine/rig.js';
import { pollUntil } from '../helpers/until.js';
import { quietRuntime } from '../workflows/harness.js';

const PINNED = 1; // temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED

interface Running {
  w: PulseWorker;
  identity: string;
  buildId: string;
  lines: string[];
  stop(): Promise<void>;
}

interface Task {
  kind: 'workflow' | 'activity';
  identity: string;
  atMs: number;
}

describe('upgrading pulse while deploys run', () => {
  let rig: Rig;
  let dir = '';
  const workers: Running[] = [];

  /** The real bundle, or a copy that differs by a trailing comment: the same code, another build id. */
  function bundle(name: string): string {
    if (name === 'A') return WORKFLOW_BUNDLE_PATH;
    const file = path.join(dir, `workflow-bundle-${name}.js`);
    writeFileSync(file, `${readFileSync(WORKFLOW_BUNDLE_PATH, 'utf8')}\n// upgrade test: build ${name}\n`);
    return file;
  }

  /**
   * A worker of build `build` in this process. Its identity is `<pid>@<host>` as the SDK's own, with the pid of a
   * stand-in process that lives exactly as long as the worker: liveness is judged by pid on this host
   * (runtime/pollers.ts), and every worker still has an identity of its own on the tasks it takes.
   */
  async function startWorker(build: string): Promise<Running> {
    const lines: string[] = [];
    const log = (m: string): void => void lines.push(m);
    const standIn = spawn('sleep', ['3600'], { stdio: 'ignore' });
    const identity = `${standIn.pid ?? 0}@${os.hostname()}`;
    const w = await rig.worker({ bundlePath: bundle(build), identity, logger: { info: log, warn: log } });
    const running = w.run();
    const r: Running = {
      w, identity, buildId: w.version.buildId, lines,
      async stop() {
        w.shutdown();
        await running;
        await w.connection.close();
        standIn.kill('SIGKILL');
        await new Promise((res) => (standIn.exitCode === null && standIn.signalCode === null ? standIn.once('exit', res) : res(undefined)));
        workers.splice(workers.indexOf(r), 1);
      },
    };
    workers.push(r);
    return r;
  }

  async function currentBuild(): Promise<string | null> {
    try {
      const d = await rig.client.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName: DEPLOYMENT_NAME });
      return d.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? null;
    } catch {
      return null; // not created before the first versioned poll
    }
  }

  async function becomesCurrent(r: Running): Promise<void> {
    const seen = await pollUntil(currentBuild, (b) => b === r.buildId, 300, 100);
    assert.equal(seen, r.buildId, `build ${r.buildId} never became current; its log: ${r.lines.join(' | ')}`);
    await saidSo(r, 'is now the current version');
  }

  /** The worker's own account (logged once its promotion call returns, a moment after the server shows it). */
  async function saidSo(r: Running, text: string): Promise<string> {
    return pollUntil(async () => r.lines.join('\n'), (l) => l.includes(text), 100, 100);
  }

  async function pinnedTo(h: WorkflowHandle): Promise<{ behavior: number; buildId: string | undefined }> {
    const v = (await h.describe()).raw.workflowExecutionInfo?.versioningInfo;
    return { behavior: Number(v?.behavior), buildId: v?.deploymentVersion?.buildId ?? undefined };
  }

  async function pendingStarted(h: WorkflowHandle, type: string): Promise<boolean> {
    const d = await h.describe();
    return (d.raw.pendingActivities ?? []).some((p) => p.activityType?.name === type && Number(p.state) === 2);
  }

  async function waitForReadinessWait(h: WorkflowHandle): Promise<void> {
    assert.equal(await pollUntil(() => pendingStarted(h, 'pollReadiness'), (ok) => ok, 600, 100), true, 'the deploy never reached its readiness wait');
  }

  /** Who took each workflow and activity task of a deploy, and when. */
  async function tasks(h: WorkflowHandle): Promise<Task[]> {
    const history = await h.fetchHistory();
    return (history.events ?? []).flatMap((e): Task[] => {
      const atMs = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
      if (e.workflowTaskStartedEventAttributes) return [{ kind: 'workflow', identity: e.workflowTaskStartedEventAttributes.identity ?? '', atMs }];
      if (e.activityTaskStartedEventAttributes) return [{ kind: 'activity', identity: e.activityTaskStartedEventAttributes.identity ?? '', atMs }];
      return [];
    });
  }

  async function assertAllOn(h: WorkflowHandle, r: Running, identity = r.identity): Promise<Task[]> {
    assert.deepEqual(await pinnedTo(h), { behavior: PINNED, buildId: r.buildId });
    const ts = await tasks(h);
    assert.ok(ts.some((t) => t.kind === 'activity'), 'the deploy ran activities');
    assert.deepEqual(ts.filter((t) => t.identity !== identity), [], `every task of ${h.workflowId} ran on ${identity}`);
    return ts;
  }

  before(async () => {
    quietRuntime();
    dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-upgrade-'));
    rig = await startRig(['spark1', 'spark2']);
  });
  after(async () => {
    for (const w of [...workers]) await w.stop().catch(() => undefined);
    await rig?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a deploy started on build A finishes on A after B comes up and takes the new deploys', async () => {
    const a = await startWorker('A');
    await becomesCurrent(a);
    assert.match(a.lines.join('\n'), new RegExp(`build ${a.buildId} is now the current version`));

    rig.sim.node('spark1').setReadyDelay(12_000);
    const old = await rig.start(rig.upPlan('spark1', 'best'));
    await waitForReadinessWait(old);
    assert.deepEqual(await pinnedTo(old), { behavior: PINNED, buildId: a.buildId });

    const b = await startWorker('B');
    assert.notEqual(b.buildId, a.buildId);
    await becomesCurrent(b);
    const bCurrentAt = Date.now();
    const fresh = await rig.start(rig.upPlan('spark2', 'best'));
    const [r1, r2] = (await Promise.all([old.result(), fresh.result()])) as DeployResult[];
    assert.equal(r1?.ok, true, r1?.error ?? '');
    assert.equal(r2?.ok, true, r2?.error ?? '');

    const oldTasks = await assertAllOn(old, a);
    // The proof is only worth something if the old deploy still had work to do once B was current.
    assert.ok(oldTasks.filter((t) => t.kind === 'workflow' && t.atMs > bCurrentAt).length >= 2, 'the old deploy ran workflow tasks after B became current');
    await assertAllOn(fresh, b);
    assert.match(b.lines.join('\n'), new RegExp(`build ${b.buildId} is now the current version .*deploys started on ${a.buildId} finish there`));
    await a.stop();
  });

  it('rolling upgrade: C comes up, B stops only after its running deploy ended there', async () => {
    const [b] = workers;
    assert.ok(b && workers.length === 1);
    rig.sim.node('spark1').setReadyDelay(8000);
    const running = await rig.start(rig.upPlan('spark1', 'datagen'));
    await waitForReadinessWait(running);
    const c = await startWorker('C');
    await becomesCurrent(c);
    const r = (await running.result()) as DeployResult;
    assert.equal(r.ok, true, r.error ?? '');
    await assertAllOn(running, b);
    await b.stop();

    const next = await rig.start(rig.downPlan('spark2'));
    const rn = (await next.result()) as DeployResult;
    assert.equal(rn.ok, true, rn.error ?? '');
    await assertAllOn(next, c);
  });

  it('a deploy whose build has no worker waits for that build, and its returning worker does not take new deploys back', async () => {
    const c = workers[0];
    assert.ok(c && workers.length === 1);
    rig.sim.node('spark2').setReadyDelay(6000);
    const pinned = await rig.start(rig.upPlan('spark2', 'best'));
    await waitForReadinessWait(pinned);
    const d = await startWorker('D');
    await becomesCurrent(d);
    await c.stop(); // the readiness wait is cancelled by the shutdown; its retry belongs to build C
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal((await pinned.describe()).status.name, 'RUNNING');
    assert.deepEqual((await tasks(pinned)).filter((t) => t.identity !== c.identity), [], 'build D never took a task of the deploy pinned to C');
    // What watch/up/down say meanwhile (cli/deploy-client/pinned-build.ts).
    const t = { client: rig.client, target: { namespace: 'default' } };
    const ref = { workflowId: pinned.workflowId, runId: pinned.firstExecutionRunId };
    assert.equal(await unservedPinnedBuild(t, ref), c.buildId);
    assert.match(pinnedBuildNote(c.buildId), new RegExp(`^deploy pinned to build ${c.buildId}; no worker of that build runs — start \`pulse worker\` from that release`));

    const back = await startWorker('C');
    assert.equal(back.buildId, c.buildId);
    assert.equal(await pollUntil(() => unservedPinnedBuild(t, ref), (b) => b === null, 100, 100), null, 'the returning worker serves it');
    const r = (await pinned.result()) as DeployResult;
    assert.equal(r.ok, true, r.error ?? '');
    assert.deepEqual(await pinnedTo(pinned), { behavior: PINNED, buildId: c.buildId });
    assert.equal(await currentBuild(), d.buildId);
    assert.match(await saidSo(back, 'serves the deploys pinned to it'), new RegExp(`build ${c.buildId} serves the deploys pinned to it; new deploys go to the current build ${d.buildId}`));

    await d.stop();
    const rollback = await startWorker('B');
    await becomesCurrent(rollback); // no live worker of D: new deploys would wait for nobody
  });
});
