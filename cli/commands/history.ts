/** `pulse model history [--node] [--limit] [--json]`: past deploys from Temporal visibility, newest first. */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { HistoryOptions } from '../options.js';
import type { DeployResult, WatchdogOutcome } from '../../runtime/model/index.js';
import { PulseError } from '../../runtime/errors.js';
import { duration, utc } from '../../runtime/format.js';
import { knownNode } from '../known-node.js';
import { plainText } from '../live-line.js';
import { connectTemporal, uiHint, uiLink, type ServerTarget } from '../deploy-client/temporal.js';
import { rolloutNodes, rolloutOutcome } from '../rollout-view.js';

export interface HistoryRow {
  time: string;
  node: string | null;
  action: string;
  profile: string | null;
  /** `ok (up)`, `failed (failed): why`, `running`, `cancelled`…: kept as it was for --json readers; the table words it anew. */
  result: string;
  /** Whether the deploy succeeded; null while it runs or when it closed without a result. */
  ok: boolean | null;
  /** The node's state after it (up, down, failed, unchanged), when the result says. */
  nodeState: string | null;
  error: string | null;
  durationS: number | null;
  /** PulseOutcome: succeeded, failed, rolled-back, cancelled (null: running, or a deploy from before it). */
  outcome: string | null;
  /** A rollback: the deploy it undid (workflowId/runId), when an up's auto-rollback started it. */
  undid: string | null;
  workflowId: string;
  runId: string;
  ui: string | null;
}

/** Visibility query for pulse deploys, optionally of one node (node names are checked: they go into the query). */
export function historyQuery(node: string | undefined): string {
  // A watchdog run is a row only when it changed the node's verdict (workflows/watchdog.ts upserts PulseOutcome then).
  const watchdog = "(WorkflowType = 'watchdogWorkflow' AND PulseOutcome IN ('watchdog-ok', 'watchdog-down'))";
  const base = `(WorkflowType IN ('upWorkflow', 'downWorkflow', 'rollbackWorkflow') OR ${watchdog})`;
  // A rollout names no one node (its children do, each under its node): it is listed only without --node.
  if (node === undefined) return `(WorkflowType IN ('upWorkflow', 'downWorkflow', 'rollbackWorkflow', 'rolloutWorkflow') OR ${watchdog})`;
  if (!/^[A-Za-z0-9._-]+$/.test(node)) throw new PulseError('usage', `--node: "${node}" is not a valid node name`);
  return `${base} AND PulseNode = '${node}'`;
}

type Outcome = Pick<HistoryRow, 'result' | 'ok' | 'nodeState' | 'error' | 'undid'> & { rolloutNodes?: string };

function outcomeOf(r: unknown): Outcome | null {
  const rollout = rolloutOutcome(r);
  if (rollout) return rollout;
  if (r && typeof r === 'object' && 'summary' in r && 'verdict' in r) {
    return { result: String((r as WatchdogOutcome).summary), ok: null, nodeState: null, error: null, undid: null };
  }
  if (!r || typeof r !== 'object' || !('ok' in r)) return null;
  const d = r as DeployResult;
  const result = d.ok ? `ok (${d.state})` : `failed (${d.state})${d.error ? `: ${d.error}` : ''}`;
  return { result, ok: d.ok, nodeState: d.state, error: d.error, undid: d.undid ?? null };
}

/** ok/failed with the node state, from the DeployResult (a failed deploy carries it in its failure's details). */
async function resultOf(client: Client, info: WorkflowExecutionInfo): Promise<Outcome> {
  const status = info.status.name;
  const bare = (result: string): Outcome => ({ result, ok: null, nodeState: null, error: null, undid: null });
  if (status === 'RUNNING') return bare('running');
  const fallback = bare(status.toLowerCase().replace('_', '-'));
  if (status !== 'COMPLETED' && status !== 'FAILED') return fallback;
  try {
    return outcomeOf(await client.workflow.getHandle(info.workflowId, info.runId).result()) ?? fallback;
  } catch (e) {
    const details = ((e as { cause?: { details?: unknown[] } }).cause?.details ?? [])[0];
    return outcomeOf(details) ?? fallback;
  }
}

async function toRow(client: Client, target: ServerTarget, info: WorkflowExecutionInfo): Promise<HistoryRow> {
  const sa = info.typedSearchAttributes;
  const { SA_NODE, SA_PROFILE, SA_ACTION, SA_OUTCOME } = await import('../../workflows/definitions.js');
  const end = info.closeTime?.getTime();
  const outcome = await resultOf(client, info);
  return {
    time: info.startTime.toISOString(),
    node: sa.get(SA_NODE) ?? rolloutNodes(outcome),
    action: sa.get(SA_ACTION) ?? info.type.replace(/Workflow$/, ''),
    profile: sa.get(SA_PROFILE) ?? null,
    result: outcome.result, ok: outcome.ok, nodeState: outcome.nodeState, error: outcome.error, undid: outcome.undid,
    durationS: end === undefined ? null : Math.round((end - info.startTime.getTime()) / 100) / 10,
    outcome: sa.get(SA_OUTCOME) ?? null,
    workflowId: info.workflowId,
    runId: info.runId,
    ui: uiLink(target, info.workflowId, info.runId),
  };
}

/** Lists up to `limit` deploys (newest first). */
export async function listHistory(client: Client, target: ServerTarget, node: string | undefined, limit: number): Promise<HistoryRow[]> {
  const infos: WorkflowExecutionInfo[] = [];
  for await (const info of client.workflow.list({ query: historyQuery(node), pageSize: Math.min(limit, 100) })) {
    infos.push(info);
    if (infos.length >= limit) break;
  }
  return Promise.all(infos.map((i) => toRow(client, target, i)));
}

/**
 * A failure message that repeats its step (`readiness: readiness not reached`, as deploys before the wording fix
 * recorded it) said once.
 */
export function onceWorded(error: string): string {
  return error.replace(/^([a-z][a-z .-]*): \1 /, '$1: ');
}

/** The result in words: `ok, node up`, `FAILED; node marked failed: why`, `running`, `cancelled`; a rolled-back up says so. */
export function resultWords(r: Pick<HistoryRow, 'result' | 'ok' | 'nodeState' | 'error'> & { outcome?: string | null }): string {
  if (r.ok === null) return r.result;
  if (r.outcome === 'rolled-back') return `FAILED, rolled back${r.error ? `: ${onceWorded(r.error)}` : ''}`;
  const why = r.error ? `: ${onceWorded(r.error)}` : '';
  if (r.ok) return `ok, node ${r.nodeState ?? '?'}`;
  const node = r.nodeState === 'failed' ? 'node marked failed' : r.nodeState === 'unchanged' ? 'node unchanged' : `node ${r.nodeState ?? '?'}`;
  return `FAILED; ${node}${why}`;
}

/** The history table: a header, one line per deploy (UTC ISO time, the one duration format), its link below. */
export function historyText(rows: readonly HistoryRow[], hint: string | null): string {
  if (rows.length === 0) return 'no deploys yet\n';
  const whats = rows.map((r) => `${r.action}${r.profile ? ` ${r.profile}` : ''} on ${r.node ?? '?'}`);
  const w = Math.max('DEPLOY'.length, ...whats.map((x) => x.length));
  const lines = [`${'STARTED (UTC)'.padEnd(20)}  ${'DEPLOY'.padEnd(w)}  ${'TOOK'.padStart(7)}  RESULT`];
  rows.forEach((r, i) => {
    const took = r.durationS === null ? '-' : duration(r.durationS);
    lines.push(`${utc(r.time).padEnd(20)}  ${(whats[i] ?? '').padEnd(w)}  ${took.padStart(7)}  ${plainText(resultWords(r))}`, `    ${r.ui ?? r.workflowId}`);
    if (r.undid) lines.push(`    undoes ${r.undid}`);
  });
  if (hint) lines.push(hint);
  return `${lines.join('\n')}\n`;
}

export async function run(opts: HistoryOptions): Promise<number> {
  historyQuery(opts.node); // a bad node name fails before any connection
  if (opts.node !== undefined) knownNode(opts.nodes, opts.node); // and so does one nodes.json does not know (exit 3)
  const t = await connectTemporal(opts);
  try {
    const rows = await listHistory(t.client, t.target, opts.node, opts.limit);
    if (opts.json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    else process.stdout.write(historyText(rows, uiHint(t.target)));
    return 0;
  } finally {
    await t.close();
  }
}
