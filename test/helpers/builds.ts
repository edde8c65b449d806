/**
 * Several pulse builds on one rig (Worker Versioning, worker/versioning.ts): build A is the real workflow bundle,
 * any other name a copy that differs by a trailing comment — the same code, another build id. Each worker runs in
 * this process with an identity `<pid>@<host>` like the SDK's own, the pid of a stand-in process that lives exactly
 * as long as the worker: liveness is judged by pid on this host (runtime/pollers.ts), and every worker's identity
 * on the tasks it takes is its own. The checks read the server's records: the pinned version in describe, the
 * worker identity on every task in history.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { DeployResult } from '../../runtime/model/index.js';
import { WORKFLOW_BUNDLE_PATH } from '../../worker/main.js';
import type { PulseWorker } from '../../worker/main.js';
import { DEPLOYMENT_NAME } from '../../worker/versioning.js';
import type { Rig } from '../engine/rig.js';
import { pollUntil } from './until.js';

export const PINNED = 1; // temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED

export interface BuildWorker {
  w: PulseWorker;
  identity: string;
  buildId: string;
  lines: string[];
  stop(): Promise<void>;
}

export interface Task {
  kind: 'workflow' | 'activity';
  identity: string;
  atMs: number;
}

export class Builds {
  readonly workers: BuildWorker[] = [];
  private readonly dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-builds-'));

  constructor(readonly rig: Rig) {}

  private bundle(name: string): string {
    if (name === 'A') return WORKFLOW_BUNDLE_PATH;
    const file = path.join(this.dir, `workflow-bundle-${name}.js`);
    // The comment goes before the inline source map: the SDK decodes everything after its `base64,` as the map, and
    // a comment appended at the end decodes to junk after the JSON whenever the map's base64 has no `=` padding
    // (so the test failed or passed with the bundle's length mod 3).
    const code = readFileSync(WORKFLOW_BUNDLE_PATH, 'utf8');
    const map = code.lastIndexOf('//# sourceMappingURL=');
    assert.ok(map > 0, 'the workflow bundle has an inline source map');
    writeFileSync(file, `${code.slice(0, map)}// upgrade test: build ${name}\n${code.slice(map)}`);
    return file;
  }

  /** A running worker of `build`; stop() drains it, then ends its stand-in process. */
  async start(build: string): Promise<BuildWorker> {
    const lines: string[] = [];
    const log = (m: string): void => void lines.push(m);
    const standIn = spawn('sleep', ['3600'], { stdio: 'ignore' });
    // Never what keeps the test file alive: a worker that failed to start left a ref'd `sleep 3600` behind, and
    // the file then hung for an hour after its failure.
    standIn.unref();
    const identity = `${standIn.pid ?? 0}@${os.hostname()}`;
    let w: Awaited<ReturnType<Rig["worker"]>>;
    try {
      w = await this.rig.worker({ bundlePath: this.bundle(build), identity, logger: { info: log, warn: log } });
    } catch (e) {
      standIn.kill('SIGKILL');
      throw e;
    }
    const running = w.run();
    const r: BuildWorker = {
      w, identity, buildId: w.version.buildId, lines,
      stop: async () => {
        w.shutdown();
        await running;
        await w.connection.close();
        standIn.kill('SIGKILL');
        await new Promise((res) => (standIn.exitCode === null && standIn.signalCode === null ? standIn.once('exit', res) : res(undefined)));
        this.workers.splice(this.workers.indexOf(r), 1);
      },
    };
    this.workers.push(r);
    return r;
  }

  async currentBuild(): Promise<string | null> {
    try {
      const d = await this.rig.client.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName: DEPLOYMENT_NAME });
      return d.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? null;
    } catch {
      return null; // not created before the first versioned poll
    }
  }

  async becomesCurrent(r: BuildWorker): Promise<void> {
    const seen = await pollUntil(() => this.currentBuild(), (b) => b === r.buildId, 300, 100);
    assert.equal(seen, r.buildId, `build ${r.buildId} never became current; its log: ${r.lines.join(' | ')}`);
    await this.saidSo(r, 'is now the current version');
  }

  /** The worker's own account (logged once its promotion call returns, a moment after the server shows it). */
  saidSo(r: BuildWorker, text: string): Promise<string> {
    return pollUntil(async () => r.lines.join('\n'), (l) => l.includes(text), 100, 100);
  }

  async pinnedTo(h: WorkflowHandle): Promise<{ behavior: number; buildId: string | undefined }> {
    const v = (await h.describe()).raw.workflowExecutionInfo?.versioningInfo;
    return { behavior: Number(v?.behavior), buildId: v?.deploymentVersion?.buildId ?? undefined };
  }

  async waitForReadinessWait(h: WorkflowHandle): Promise<void> {
    const started = async (): Promise<boolean> =>
      ((await h.describe()).raw.pendingActivities ?? []).some((p) => p.activityType?.name === 'pollReadiness' && Number(p.state) === 2);
    assert.equal(await pollUntil(started, (ok) => ok, 600, 100), true, 'the deploy never reached its readiness wait');
  }

  /** Who took each workflow and activity task of a deploy, and when. */
  async tasks(h: WorkflowHandle): Promise<Task[]> {
    const history = await h.fetchHistory();
    return (history.events ?? []).flatMap((e): Task[] => {
      const atMs = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
      if (e.workflowTaskStartedEventAttributes) return [{ kind: 'workflow', identity: e.workflowTaskStartedEventAttributes.identity ?? '', atMs }];
      if (e.activityTaskStartedEventAttributes) return [{ kind: 'activity', identity: e.activityTaskStartedEventAttributes.identity ?? '', atMs }];
      return [];
    });
  }

  /** The deploy is pinned to r's build and every one of its tasks ran on r. */
  async assertAllOn(h: WorkflowHandle, r: BuildWorker): Promise<Task[]> {
    assert.deepEqual(await this.pinnedTo(h), { behavior: PINNED, buildId: r.buildId });
    const ts = await this.tasks(h);
    assert.ok(ts.some((t) => t.kind === 'activity'), 'the deploy ran activities');
    assert.deepEqual(ts.filter((t) => t.identity !== r.identity), [], `every task of ${h.workflowId} ran on ${r.identity}`);
    return ts;
  }

  async close(): Promise<void> {
    for (const w of [...this.workers]) await w.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The upgrade itself: a deploy started on build A (spark1's server held from listening until B is current) keeps all
 * its remaining workflow and activity tasks on A after B comes up and becomes current, while a new deploy (spark2)
 * runs on B. Leaves B running.
 */
export async function upgradeDuringDeploy(b: Builds): Promise<BuildWorker> {
  const { rig } = b;
  const a = await b.start('A');
  await b.becomesCurrent(a);

  const spark1 = rig.sim.node('spark1');
  spark1.setControl({ holdReady: true });
  let old: WorkflowHandle;
  let next: BuildWorker;
  let nextCurrentAt: number;
  try {
    old = await rig.start(rig.upPlan('spark1', 'best'));
    await b.waitForReadinessWait(old);
    assert.deepEqual(await b.pinnedTo(old), { behavior: PINNED, buildId: a.buildId });

    next = await b.start('B');
    assert.notEqual(next.buildId, a.buildId);
    await b.becomesCurrent(next);
    nextCurrentAt = Date.now();
  } finally {
    spark1.setControl({ holdReady: false }); // the old deploy's readiness, and the rest of its steps, come after this
  }
  const fresh = await rig.start(rig.upPlan('spark2', 'best'));
  const [r1, r2] = (await Promise.all([old.result(), fresh.result()])) as DeployResult[];
  assert.equal(r1?.ok, true, r1?.error ?? '');
  assert.equal(r2?.ok, true, r2?.error ?? '');

  const oldTasks = await b.assertAllOn(old, a);
  // The proof is only worth something if the old deploy still had work to do once B was current.
  assert.ok(oldTasks.filter((t) => t.kind === 'workflow' && t.atMs > nextCurrentAt).length >= 2, 'the old deploy ran workflow tasks after B became current');
  await b.assertAllOn(fresh, next);
  assert.match(next.lines.join('\n'), new RegExp(`build ${next.buildId} is now the current version .*deploys started on ${a.buildId} finish there`));
  await a.stop();
  return next;
}
