/**
 * Worker Versioning: every pulse worker polls as one version of the worker deployment `pulse`, and every deploy is
 * PINNED to the version whose worker ran its first workflow task, so a deploy started before an upgrade finishes on
 * the code that started it (a new workflow input or step sequence never meets an old history). The build id is
 * the package version plus the bundle's hash, so any change to workflow code is a new build, and hosts running the
 * same release agree on it without configuration.
 *
 * New deploys go to the deployment's *current* version. A worker makes its own version current when there is none,
 * when no live worker of the current build polls (new deploys would wait for nobody), or when the current one is
 * older and this build was never current before — so a newly started release takes over, while an old release
 * restarted to drain its pinned deploys, or a build rolled back by an operator (`temporal worker deployment
 * set-current-version`), does not take over from a running newer build.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import type { NativeConnection } from '@temporalio/worker';
import { buildPolls, queuePollers } from '../runtime/pollers.js';

export const DEPLOYMENT_NAME = 'pulse';

export interface BuildVersion {
  deploymentName: string;
  buildId: string;
}

/** The package version from package.json (two levels above dist/worker/). */
function packageVersion(): string {
  const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/** The prebuilt bundle (node dist/worker/build-bundle.js), beside this file's dist/worker/ directory. */
export const WORKFLOW_BUNDLE_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'workflow-bundle.js');

/** The build id of the bundle this install runs (what a worker started from it polls as). */
export function currentBuildId(codePath = WORKFLOW_BUNDLE_PATH): string {
  return buildIdOf(readFileSync(codePath));
}

/** `<package version>-<first 12 hex of sha256(bundle)>`: the same on every host of one release, new on any workflow change. */
export function buildIdOf(bundleCode: string | Buffer, version = packageVersion()): string {
  return `${version}-${createHash('sha256').update(bundleCode).digest('hex').slice(0, 12)}`;
}

/** The worker options of one version: versioned polling, every workflow pinned to the version that started it. */
export function deploymentOptions(v: BuildVersion): WorkerDeploymentOptions {
  return { useWorkerVersioning: true, version: v, defaultVersioningBehavior: 'PINNED' };
}

type Service = NativeConnection['workflowService'];
/** The part of DescribeWorkerDeployment's answer that `decide` reads. */
export interface DeploymentLike {
  versionSummaries?: { deploymentVersion?: { buildId?: string | null } | null; createTime?: { seconds?: unknown } | null; firstActivationTime?: unknown }[] | null;
  routingConfig?: { currentDeploymentVersion?: { buildId?: string | null } | null } | null;
}

export type PromoteOutcome =
  | { kind: 'made-current'; previous: string | null }
  | { kind: 'already-current' }
  | { kind: 'left'; current: string; reason: string }
  | { kind: 'gave-up'; reason: string };

export interface PromoteOptions {
  service: Service;
  namespace: string;
  version: BuildVersion;
  identity: string;
  /** The deploy (workflow) task queue: whether the current build still has a live worker is read from its pollers. */
  taskQueue: string;
  /** Bound on the retries while the server registers this version (first poll → visible in the deployment). */
  attempts?: number;
  /** First pause between attempts; doubles up to 2 s. */
  delayMs?: number;
  /** The worker stopped: stop trying. */
  signal?: AbortSignal;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

const GRPC_NOT_FOUND = 5;
const GRPC_FAILED_PRECONDITION = 9;
const GRPC_ABORTED = 10;

function grpcCode(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number' ? err.code : undefined;
}

function seconds(t: { seconds?: unknown } | null | undefined): number {
  const s = t?.seconds;
  if (s === null || s === undefined) return 0;
  return typeof s === 'object' && 'toNumber' in s && typeof s.toNumber === 'function' ? (s.toNumber() as number) : Number(s);
}

/**
 * What to do with the deployment as it stands: null = this version is not visible yet (retry), else a decision.
 * `currentPolls`: a live worker of the current build polls the deploy queue. Pure, so the rule is tested apart
 * from a server.
 */
export function decide(info: DeploymentLike | null | undefined, buildId: string, currentPolls: boolean): 'promote' | PromoteOutcome | null {
  const summaries = info?.versionSummaries ?? [];
  const mine = summaries.find((s) => s.deploymentVersion?.buildId === buildId);
  if (!mine) return null;
  const current = currentBuildOf(info);
  if (!current) return 'promote';
  if (current === buildId) return { kind: 'already-current' };
  if (!currentPolls) return 'promote';
  if (mine.firstActivationTime) return { kind: 'left', current, reason: 'this build was current before (rolled back or draining)' };
  const theirs = summaries.find((s) => s.deploymentVersion?.buildId === current);
  if (theirs && seconds(theirs.createTime) > seconds(mine.createTime)) return { kind: 'left', current, reason: 'the current build is newer' };
  return 'promote';
}

function currentBuildOf(info: DeploymentLike | null | undefined): string | undefined {
  return info?.routingConfig?.currentDeploymentVersion?.buildId ?? undefined;
}

async function currentPolls(o: PromoteOptions, current: string | undefined): Promise<boolean> {
  if (!current || current === o.version.buildId) return true;
  return buildPolls(await queuePollers(o.service, o.namespace, o.taskQueue, 'workflow'), current);
}

/**
 * Make this worker's version the deployment's current one when `decide` says so. Call it once the worker polls:
 * the server creates the version on its first poll, and a real cluster may take a moment to show it (and to see
 * both task queues in it), so this retries a bounded number of times instead of sleeping once.
 */
export async function promoteVersion(o: PromoteOptions): Promise<PromoteOutcome> {
  const attempts = o.attempts ?? 30;
  let delay = o.delayMs ?? 200;
  let last = 'the version did not appear in the deployment';
  for (let i = 0; i < attempts; i++) {
    if (i > 0) {
      await pause(delay, o.signal);
      delay = Math.min(delay * 2, 2000);
    }
    if (o.signal?.aborted) return { kind: 'gave-up', reason: 'the worker stopped' };
    let res: Awaited<ReturnType<Service['describeWorkerDeployment']>>;
    try {
      res = await o.service.describeWorkerDeployment({ namespace: o.namespace, deploymentName: o.version.deploymentName });
    } catch (err) {
      if (grpcCode(err) === GRPC_NOT_FOUND) continue; // the deployment is created by the first poll
      throw err;
    }
    const d = decide(res.workerDeploymentInfo, o.version.buildId, await currentPolls(o, currentBuildOf(res.workerDeploymentInfo)));
    if (d === null) continue;
    if (d !== 'promote') return d;
    const previous = currentBuildOf(res.workerDeploymentInfo) ?? null;
    try {
      await o.service.setWorkerDeploymentCurrentVersion({
        namespace: o.namespace,
        deploymentName: o.version.deploymentName,
        buildId: o.version.buildId,
        conflictToken: res.conflictToken,
        identity: o.identity,
        // Never: a queue the current version serves and this one does not would be left without a worker.
        ignoreMissingTaskQueues: false,
      });
      return { kind: 'made-current', previous };
    } catch (err) {
      const code = grpcCode(err);
      // Not yet seen on every task queue, or another worker changed the deployment meanwhile: look again.
      if (code === GRPC_FAILED_PRECONDITION || code === GRPC_ABORTED || code === GRPC_NOT_FOUND) {
        last = err instanceof Error ? err.message : String(err);
        continue;
      }
      throw err;
    }
  }
  return { kind: 'gave-up', reason: last };
}
