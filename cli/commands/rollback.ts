/**
 * `pulse model rollback --node N [--to BACKUP] [--yes] [--force] [--dry-run] [--detach]`: bring the node back to the
 * exact bytes of a .env backup (default: the one last known good points to, else the one the last up wrote, never one
 * whose .env failed). The worker reads and checks the backup on the node and runs the up steps with it
 * (workflows/rollback.ts); --dry-run reads it from here (read-only) and shows which backup and why, its profile and
 * the key difference to the live .env.
 */
import path from 'node:path';
import type { NodeConfig } from '../../runtime/config/nodes.js';
import { PulseError } from '../../runtime/errors.js';
import type { NodeState, RollbackRequest } from '../../runtime/model/index.js';
import { backupMark } from '../../runtime/state/env-runs.js';
import type { RollbackOptions } from '../options.js';
import { runDeploy } from '../deploy-client/index.js';
import { deployView } from '../deploy-view.js';
import { plainText } from '../live-line.js';
import { table } from '../render-text.js';
import { utc } from '../../runtime/format.js';
import type { BackupEntry } from '../../runtime/status/backups.js';

/** --to as given (absolute), or a bare backup name in the node's first recipe dir. */
function named(node: NodeConfig, to: string): string {
  const dir = Object.values(node.recipes)[0]?.dir ?? '';
  return to.startsWith('/') ? to : path.posix.join(dir, to);
}

/**
 * The backup a plain rollback takes: the one last known good points to, else the one the last up wrote; and why.
 * Never, by default, one whose .env failed (the state file's mark, runtime/state/env-runs.ts): after an up that
 * failed and was undone (its auto-rollback), the last up's backup holds the .env that failed, and restoring it would
 * bring back what just failed. That is refused, naming it and what failed; `--to` restores it on purpose.
 */
function defaultBackup(name: string, state: NodeState | null): { backup: string; why: string } | null {
  const lkg = state?.lastKnownGood?.backupPath ?? null;
  const backup = lkg ?? state?.backupPath ?? null;
  if (backup === null) return null;
  const mark = backupMark(state, backup);
  const what = lkg !== null ? 'the last known good' : 'the .env the last up replaced';
  if (mark?.failed) {
    const serves = state?.state === 'up' && state.lastKnownGood && state.lastKnownGood.backupPath === null
      ? `${name} serves ${state.profile ?? '?'}, its last known good, now: there is nothing to roll back to. `
      : '';
    throw new PulseError('refused', `${name}: the default backup, ${what} (${path.posix.basename(backup)}), holds an .env that failed (${mark.text}): a rollback to it would bring back what failed`, {
      hint: `${serves}See each backup's outcome: pulse model rollback --node ${name} --list; restore one on purpose: pulse model rollback --node ${name} --to <BACKUP>`,
    });
  }
  return { backup, why: `the default, ${what}${mark ? ` (${mark.text})` : ''}` };
}

async function requestOf(opts: RollbackOptions): Promise<{ request: RollbackRequest; node: NodeConfig; why: string }> {
  const { loadNodesConfig, nodeOf } = await import('../../runtime/config/nodes.js');
  const { resolveNodesPath } = await import('../../runtime/state/paths.js');
  const { trustedStateDir, readNodeState } = await import('../../runtime/state/state.js');
  const { utc } = await import('../../runtime/format.js');
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const node = nodeOf(config, opts.node);
  const state = await readNodeState(trustedStateDir(), opts.node);
  const chosen = opts.to ? { backup: named(node, opts.to), why: 'named by --to' } : defaultBackup(opts.node, state);
  const backup = chosen?.backup ?? null;
  if (!backup) {
    throw new PulseError('precondition', `${opts.node}: no backup to roll back to (no up replaced a .env there since pulse keeps last known good)`, {
      hint: `name one: pulse model rollback --node ${opts.node} --to <.env.pulse-bak-...>`,
    });
  }
  if (node.protected && !opts.yes && !opts.dryRun) throw new PulseError('refused', `node ${opts.node} is protected; add --yes to roll it back`);
  const request: RollbackRequest = {
    action: 'rollback', version: 1, node: opts.node, backup, confirmed: opts.yes, force: opts.force,
    // What it undoes: the deploy that left the node as it is (its state's workflow run), so history links the two as it
    // does an auto-rollback's (issue 30 item 10).
    renderedAt: utc(new Date()), undid: state?.workflowId ? `${state.workflowId}/${state.runId ?? ''}` : null, timeoutS: opts.timeoutS ?? null,
    ...(opts.drainS !== undefined ? { drainS: opts.drainS } : {}),
  };
  const mark = opts.to ? backupMark(state, backup) : null;
  return { request, node, why: `${chosen?.why ?? ''}${mark ? ` (${mark.text})` : ''}` };
}

/** The dry-run: read the backup and the live .env on the node (read-only), make the plan as the worker would. */
async function dryRun(opts: RollbackOptions, request: RollbackRequest, why: string): Promise<number> {
  const { loadNodesConfig } = await import('../../runtime/config/nodes.js');
  const { loadProfiles } = await import('../../runtime/config/profiles.js');
  const { resolveNodesPath } = await import('../../runtime/state/paths.js');
  const { backupRecipeDir, buildRestorePlan, keyDifference } = await import('../../runtime/plan/restore.js');
  const { openSession } = await import('../../runtime/node/connect.js');
  const { readBackup } = await import('../../runtime/steps/index.js');
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const dir = backupRecipeDir(config, opts.node, request.backup);
  const n = config.nodes[opts.node]!;
  const session = await openSession(n.host === 'ssh' ? { name: opts.node, host: 'ssh', ssh: n.ssh } : { name: opts.node, host: 'local' });
  let read;
  try {
    read = await readBackup(session, request.backup, `${dir}/.env`);
  } finally {
    await session.close();
  }
  const plan = buildRestorePlan(config, loadProfiles(), { node: opts.node, backup: request.backup, text: read.text, yes: opts.yes, force: opts.force, timeoutS: opts.timeoutS, protectBackup: request.backup }, new Date(request.renderedAt));
  const diff = keyDifference(read.current, plan.env.values);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ backup: request.backup, chosen: why, profile: plan.profile, identity: plan.env.identity, forced: plan.restore?.forced ?? null, secretLines: read.secretLines, keyDifference: diff, plan }, null, 2)}\n`);
    return 0;
  }
  const lines = [
    `rollback on ${opts.node} (dry-run: nothing runs, nothing is written)`,
    `  backup:   ${request.backup}`,
    `  chosen:   ${why}`,
    `  profile:  ${plan.profile} (sha256 ${plan.env.identity.sha256.slice(0, 12)}, overlay ${plan.env.identity.overlay})`,
    ...(plan.restore?.forced ? [`  forced:   ${plan.restore.forced}`] : []),
    `  serves:   ${plan.expect.servedModelName || '?'}, max_model_len ${plan.expect.maxModelLen ?? '?'} on ${plan.expect.bind}:${plan.expect.port}`,
    `  secrets:  ${read.secretLines} HF_TOKEN/API_KEY line(s), restored with the file (never read off the node)`,
    read.current === null ? '  live .env: none' : diff.length === 0 ? '  key difference to the live .env: none' : '  key difference (live → restored):',
    ...diff.map((d) => `    ${d}`),
    ...(plan.protected && !opts.yes ? [`  ${opts.node} is protected: the real rollback needs --yes`] : []),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

/** `--list`: the node's backups, newest first, as `--to` takes them (read-only; no Temporal server is asked). */
async function list(opts: RollbackOptions): Promise<number> {
  const { loadNodesConfig, nodeOf, targetOf } = await import('../../runtime/config/nodes.js');
  const { resolveNodesPath } = await import('../../runtime/state/paths.js');
  const { defaultStateDir, readNodeState } = await import('../../runtime/state/state.js');
  const { openSession } = await import('../../runtime/node/connect.js');
  const { listBackups } = await import('../../runtime/status/backups.js');
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const node = nodeOf(config, opts.node);
  const state = await readNodeState(defaultStateDir(), opts.node);
  const session = await openSession(targetOf(opts.node, node));
  let entries;
  try {
    entries = await listBackups(session, node, state);
  } finally {
    await session.close();
  }
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(backupsText(opts.node, entries));
  return 0;
}

/** The backups as a table: name, recipe, profile, render time, and which one last known good or the last up names. */
export function backupsText(node: string, entries: readonly BackupEntry[]): string {
  if (entries.length === 0) return `no .env backups on ${node} (an up writes one when it replaces a .env)\n`;
  const rows = entries.map((e) => [
    e.name, e.recipe, e.regular ? (e.profile ?? '(no pulse header)') : `(${e.kind}: refused)`, e.rendered ? utc(e.rendered) : '-',
    [e.lastKnownGood ? 'last known good' : '', e.lastUpWrote ? 'the last up replaced this' : '', e.mark ?? ''].filter((x) => x !== '').join('; '),
  ]);
  const lines = [`backups on ${node}, newest first:`, ...table([['BACKUP', 'RECIPE', 'PROFILE', 'RENDERED (UTC)', ''], ...rows]).map(plainText)];
  lines.push(`restore one: pulse model rollback --node ${node} --to <BACKUP> (--dry-run first shows the key difference)`);
  return `${lines.join('\n')}\n`;
}

export async function run(opts: RollbackOptions): Promise<number> {
  if (opts.list) return list(opts);
  const { request, why } = await requestOf(opts); // config errors and refusals come before any Temporal connection
  if (opts.dryRun) return dryRun(opts, request, why);
  return runDeploy(request, opts, deployView(opts));
}
