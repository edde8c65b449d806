/**
 * What a terminal that leaves a deploy says (Ctrl-C, `--detach`): who runs the deploy now, and how to follow,
 * cancel and roll it back. Beside the embedded server a background worker runs it (cli/deploy-client/background-worker.ts), so
 * closing the terminal stops nothing; beside a configured server whose only worker was this CLI, the deploy pauses
 * until a `pulse worker` runs, and the lines say so.
 */
import { ensureBackgroundWorker, queuesServed, type DeployRef, type WorkerRole } from './deploy-client/index.js';
import { liveBackgroundWorker } from './deploy-client/background-worker.js';
import { stateDir, uiLink, type PulseTemporal } from './deploy-client/temporal.js';

/** How to follow, cancel and roll back the deploy of `node`. */
export function detachWayOut(node: string, rollbackHint: string | null, protectedNode: boolean): string[] {
  return [
    `follow it: pulse model watch --node ${node}`,
    `cancel it: pulse model cancel --node ${node}${protectedNode ? ' --yes' : ''}   (the node is then marked failed; its endpoint stays disabled)`,
    rollbackHint
      ? `roll back: ${rollbackHint}   (once it has ended; cancel it first to stop it now)`
      : `roll back: nothing earlier is saved for ${node}; pulse model history --node ${node} lists what ran`,
  ];
}

/** The background worker that runs beside the embedded server (this command's, or one an earlier command started), or null. */
export async function backgroundPid(t: PulseTemporal, role: WorkerRole): Promise<number | null> {
  return role.background ?? (t.target.embedded ? ((await liveBackgroundWorker(stateDir()))?.pid ?? null) : null);
}

/** The lines of a Ctrl-C while following. */
export async function detachLines(t: PulseTemporal, ref: DeployRef, node: string, role: WorkerRole, plan: { rollbackHint?: string | null; protectedNode?: boolean }): Promise<string[]> {
  const background = await backgroundPid(t, role);
  const lines = background !== null
    ? [`detached: the deploy goes on in the background pulse worker (pid ${background}); closing this terminal does not stop it.`]
    : role.ranWorker
      ? [
          'detached. This pulse ran the deploy\'s only worker, which stops now: the deploy pauses, its state safe in Temporal.',
          'It goes on when `pulse worker` runs, or `pulse model watch`, which runs a worker while it follows.',
          'The running step gets a few seconds to finish (Ctrl-C again to leave at once).',
        ]
      : ['detached: the deploy goes on.'];
  lines.push(...detachWayOut(node, plan.rollbackHint ?? null, plan.protectedNode === true));
  const link = uiLink(t.target, ref.workflowId, ref.runId);
  if (link) lines.push(`Temporal UI: ${link}`);
  return lines;
}

/**
 * For `--detach` when no worker polls: beside the embedded server, start the background worker and name it; beside
 * a configured server, say that the deploy waits for a worker. Returns the line and the background worker's pid.
 */
export async function detachedWorker(t: PulseTemporal, nodes: string | undefined): Promise<{ line: string; pid: number | null }> {
  const waits = 'the deploy waits until `pulse worker` runs (or `pulse model watch`, which runs a worker while it follows)';
  if (!t.target.embedded) return { line: `no pulse worker serves the pulse task queues: ${waits}`, pid: null };
  const served = await queuesServed(t);
  const bg = await ensureBackgroundWorker(t, { nodes, gateway: !served.gateway });
  if ('failed' in bg) return { line: `no pulse worker serves the pulse task queues, and the background worker did not start (${bg.failed}): ${waits}`, pid: null };
  return { line: `a background pulse worker (pid ${bg.pid}) runs it beside the embedded server; it exits after ${bg.idleS} s with no deploy (log: ${bg.logFile})`, pid: bg.pid };
}
