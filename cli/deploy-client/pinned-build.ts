/**
 * A deploy pinned to a build no worker runs any more (worker/versioning.ts): each deploy finishes on the pulse
 * build that started it, so after an upgrade that stopped the old release too early it waits — visibly, here —
 * until a worker of that build polls again. Workers of other builds never take it.
 */
import { buildPolls, queuePollers } from '../../runtime/pollers.js';
import { TASK_QUEUE } from '../../workflows/definitions.js';
import type { PulseTemporal } from './temporal.js';
import type { DeployRef } from './deploys.js';
import { PINNED } from './presence.js';

const CHECK_MS = 15_000;

/** The build the run is pinned to when no live worker of that build polls the deploy queue; null otherwise. */
export async function unservedPinnedBuild(t: Pick<PulseTemporal, 'client'> & { target: { namespace: string } }, ref: Pick<DeployRef, 'workflowId' | 'runId'>): Promise<string | null> {
  const d = await t.client.workflow.getHandle(ref.workflowId, ref.runId).describe();
  if (d.status.name !== 'RUNNING') return null;
  const v = d.raw.workflowExecutionInfo?.versioningInfo;
  const buildId = v?.deploymentVersion?.buildId;
  if (Number(v?.behavior) !== PINNED || !buildId) return null;
  return buildPolls(await queuePollers(t.client.workflowService, t.target.namespace, TASK_QUEUE, 'workflow'), buildId) ? null : buildId;
}

export function pinnedBuildNote(buildId: string): string {
  return `deploy pinned to build ${buildId}; no worker of that build runs — start \`pulse worker\` from that release (docs/PRODUCTION.md "Upgrading pulse")`;
}

/**
 * Checks now and every CHECK_MS while a deploy is followed, and says each unserved build once when two checks in a
 * row find it so: a deploy of this CLI's own build is served within one interval by the worker keeper
 * (local-worker.ts), and a worker restarting is not worth a line.
 */
export function watchPinnedBuild(t: PulseTemporal, ref: DeployRef, say: (line: string) => void): () => void {
  const said = new Set<string>();
  let seen: string | null = null;
  const check = async (): Promise<void> => {
    const b = await unservedPinnedBuild(t, ref);
    if (b && b === seen && !said.has(b)) {
      said.add(b);
      say(pinnedBuildNote(b));
    }
    seen = b;
  };
  void check().catch(() => undefined);
  const timer = setInterval(() => void check().catch(() => undefined), CHECK_MS);
  return () => clearInterval(timer);
}
