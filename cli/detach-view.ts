/**
 * What a terminal that leaves a deploy says (Ctrl-C, `--detach`): who runs the deploy now, and how to follow,
 * cancel and roll it back. Beside the embedded server a background worker runs it (cli/deploy-client/background-worker.ts), so
 * closing the terminal stops nothing; beside a configured server whose only worker was this CLI, the deploy pauses
 * until a `pulse worker` runs, and the lines say so. The facts come from the deploy client (cli/deploy-client/run.ts).
 */
import type { DetachedWorker, FollowEnd } from './deploy-client/index.js';

/**
 * How to follow, cancel and roll back the deploy of `node`. Rolling back an up is `pulse model rollback`, which puts
 * back the exact bytes of the .env the up replaced (never `up <profile>` again: that renders anew, and it named the
 * very profile being deployed when the node already ran it); a node that was down before goes back with `down`.
 */
export function detachWayOut(node: string, rollbackHint: string | null, protectedNode: boolean): string[] {
  const yes = protectedNode ? ' --yes' : '';
  const back = rollbackHint === null ? null : rollbackHint.startsWith('pulse model down ') ? rollbackHint : `pulse model rollback --node ${node}${yes}`;
  return [
    `follow it: pulse model watch --node ${node}`,
    `cancel it: pulse model cancel --node ${node}${yes} --wait   (it stops what it started; the node is then marked failed and its endpoint stays disabled)`,
    back
      ? `roll back: ${back}   (once it has ended: the .env it replaced, byte for byte; cancel it first to stop it now)`
      : `roll back: nothing earlier is saved for ${node}; pulse model history --node ${node} lists what ran`,
  ];
}

/** The lines of a Ctrl-C while following. */
export function detachLines(end: FollowEnd, node: string, plan: { rollbackHint?: string | null; protectedNode?: boolean }): string[] {
  const lines = end.background !== null
    ? [`detached: the deploy goes on in the background pulse worker (pid ${end.background}); closing this terminal does not stop it.`]
    : end.ranWorker
      ? [
          'detached. This pulse ran the deploy\'s only worker, which stops now: the deploy pauses, its state safe in Temporal.',
          'It goes on when `pulse worker` runs, or `pulse model watch`, which runs a worker while it follows.',
          'The running step gets a few seconds to finish (Ctrl-C again to leave at once).',
        ]
      : ['detached: the deploy goes on.'];
  lines.push(...detachWayOut(node, plan.rollbackHint ?? null, plan.protectedNode === true));
  if (end.link) lines.push(`Temporal UI: ${end.link}`);
  return lines;
}

/** For `--detach` when no worker polls: the line that says who runs the deploy (or that it waits for a worker). */
export function detachedWorkerLine(w: DetachedWorker): string {
  const waits = 'the deploy waits until `pulse worker` runs (or `pulse model watch`, which runs a worker while it follows)';
  if ('configured' in w) return `no pulse worker serves the pulse task queues: ${waits}`;
  if ('failed' in w) return `no pulse worker serves the pulse task queues, and the background worker did not start (${w.failed}): ${waits}`;
  return `a background pulse worker (pid ${w.pid}) runs it beside the embedded server; it exits after ${w.idleS} s with no deploy (log: ${w.logFile})`;
}
