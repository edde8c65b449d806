/** `pulse model history [--node] [--limit] [--json]`: past deploys from Temporal visibility, newest first. */
import { FAILURES } from '../../runtime/failures.js';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { HistoryOptions } from '../options.js';
import type { DeployResult, DrainOutcome, WatchdogOutcome } from '../../runtime/model/index.js';
import { PulseError } from '../../runtime/errors.js';
import { duration, utc } from '../../runtime/format.js';
import { knownNode } from '../known-node.js';
import { cut, plainText } from '../live-line.js';
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
  /** The drain before its stop (DeployResult.drain: cut is what the stop cut); null: no drain ran, or no result. */
  drain: DrainOutcome | null;
  workflowId: string;
  runId: string;
  ui: string | null;
}

/**
 * history's filters: --since (an ISO time: StartTime after it), --failed (failed, rolled back, or a watchdog's down;
 * not a cancel, a refusal or a stopped rollout, which visibility lists among the failed workflows: listHistory drops them).
 */
export interface HistoryFilter {
  since?: string | null;
  failed?: boolean;
}

/** The filters as visibility clauses (the time is made by the CLI from a checked duration or date, never as typed). */
function filterClauses(f: HistoryFilter): string {
  const c: string[] = [];
  if (f.since) c.push(`StartTime > '${new Date(f.since).toISOString()}'`);
  if (f.failed) c.push("(ExecutionStatus IN ('Failed', 'TimedOut', 'Terminated') OR PulseOutcome IN ('failed', 'rolled-back', 'watchdog-down'))");
  return c.map((x) => ` AND ${x}`).join('');
}

/** Visibility query for pulse deploys, optionally of one node (node names are checked: they go into the query). */
export function historyQuery(node: string | undefined, filter: HistoryFilter = {}): string {
  return baseQuery(node) + filterClauses(filter);
}

function baseQuery(node: string | undefined): string {
  // A watchdog run is a row only when it changed the node's verdict (workflows/watchdog.ts upserts PulseOutcome then).
  const watchdog = "(WorkflowType = 'watchdogWorkflow' AND PulseOutcome IN ('watchdog-ok', 'watchdog-down'))";
  const base = `(WorkflowType IN ('upWorkflow', 'downWorkflow', 'rollbackWorkflow') OR ${watchdog})`;
  // A rollout names no one node (its children do, each under its node): it is listed only without --node.
  if (node === undefined) return `(WorkflowType IN ('upWorkflow', 'downWorkflow', 'rollbackWorkflow', 'rolloutWorkflow') OR ${watchdog})`;
  if (!/^[A-Za-z0-9._-]+$/.test(node)) throw new PulseError('usage', `--node: "${node}" is not a valid node name`);
  return `${base} AND PulseNode = '${node}'`;
}

type Outcome = Pick<HistoryRow, 'result' | 'ok' | 'nodeState' | 'error' | 'undid'> & { drain?: DrainOutcome | null; rolloutNodes?: string };

function outcomeOf(r: unknown): Outcome | null {
  const rollout = rolloutOutcome(r);
  if (rollout) return rollout;
  if (r && typeof r === 'object' && 'summary' in r && 'verdict' in r) {
    return { result: String((r as WatchdogOutcome).summary), ok: null, nodeState: null, error: null, undid: null };
  }
  if (!r || typeof r !== 'object' || !('ok' in r)) return null;
  const d = r as DeployResult;
  const word = d.errorType === FAILURES.cancelled.type ? 'cancelled' : 'failed';
  const result = d.ok ? `ok (${d.state})` : `${word} (${d.state})${d.error ? `: ${d.error}` : ''}`;
  return { result, ok: d.ok, nodeState: d.state, error: d.error, undid: d.undid ?? null, drain: d.drain ?? null };
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
  const { SA_NODE, SA_PROFILE, SA_ACTION, SA_OUTCOME, ROLLOUT_WORKFLOW } = await import('../../workflows/definitions.js');
  const end = info.closeTime?.getTime();
  const outcome = await resultOf(client, info);
  return {
    time: info.startTime.toISOString(),
    node: sa.get(SA_NODE) ?? rolloutNodes(outcome),
    action: sa.get(SA_ACTION) ?? info.type.replace(/Workflow$/, ''),
    profile: sa.get(SA_PROFILE) ?? null,
    result: outcome.result, ok: outcome.ok, nodeState: outcome.nodeState, error: outcome.error, undid: outcome.undid, drain: outcome.drain ?? null,
    durationS: end === undefined ? null : Math.round((end - info.startTime.getTime()) / 100) / 10,
    // A rollout sets no outcome attribute: its result's first word is its outcome (`refused: ...`), as the row says.
    outcome: sa.get(SA_OUTCOME) ?? (info.type === ROLLOUT_WORKFLOW ? (/^([a-z-]+): /.exec(outcome.result)?.[1] ?? null) : null),
    workflowId: info.workflowId,
    runId: info.runId,
    ui: uiLink(target, info.workflowId, info.runId),
  };
}

/**
 * Lists up to `limit` deploys, newest start first (visibility answers in its own order: a long deploy that closed
 * late came before shorter ones that started after it, issue 30 item 10).
 */
export async function listHistory(client: Client, target: ServerTarget, node: string | undefined, limit: number, filter: HistoryFilter = {}): Promise<HistoryRow[]> {
  const rows: HistoryRow[] = [];
  let batch: WorkflowExecutionInfo[] = [];
  const keep = (r: HistoryRow): boolean => !filter.failed || !NOT_FAILURES.has(outcomeWord(r));
  const flush = async (): Promise<void> => {
    rows.push(...(await Promise.all(batch.map((i) => toRow(client, target, i)))).filter(keep));
    batch = [];
  };
  for await (const info of client.workflow.list({ query: historyQuery(node, filter), pageSize: Math.min(limit, 100) })) {
    batch.push(info);
    if (batch.length < limit - rows.length) continue;
    await flush();
    if (rows.length >= limit) break;
  }
  if (batch.length > 0) await flush();
  return rows.slice(0, limit).sort((a, b) => Date.parse(b.time) - Date.parse(a.time));
}

/** The outcomes that end a workflow as failed in Temporal's eyes but are not failures: --failed leaves them out. */
const NOT_FAILURES: ReadonlySet<string> = new Set(['CANCELLED', 'REFUSED', 'STOPPED']);

/**
 * A row's outcome in the one word the live screen and the exit code use: ok, FAILED, CANCELLED (exit 13), REFUSED
 * (exit 4), STOPPED (a rollout stopped by request after a node, exit 13); a row without a result (running, a
 * terminated workflow) keeps its status word.
 */
export function outcomeWord(r: Pick<HistoryRow, 'result' | 'ok'> & { outcome?: string | null; action?: string }): string {
  if (r.ok === null) return r.result;
  if (r.ok) return 'ok';
  if (r.action === 'rollout') {
    const outcome = /^([a-z-]+): /.exec(r.result)?.[1] ?? 'failed';
    return outcome === 'failed' ? 'FAILED' : outcome.toUpperCase();
  }
  // A cancel ends the workflow as failed (DeployCancelled): its outcome, or its result's word, says it was a cancel.
  if (r.outcome === 'cancelled' || r.result.startsWith('cancelled')) return 'CANCELLED';
  return 'FAILED';
}

/**
 * A failure message that repeats its step (`readiness: readiness not reached`, as deploys before the wording fix
 * recorded it) said once.
 */
export function onceWorded(error: string): string {
  return error.replace(/^([a-z][a-z .-]*): \1 /, '$1: ');
}

/** The result in words: `ok, node up`, `FAILED; node marked failed: why`, `running`, `cancelled`; a rolled-back up says so. */
export function resultWords(r: Pick<HistoryRow, 'result' | 'ok' | 'nodeState' | 'error'> & { outcome?: string | null; action?: string }): string {
  if (r.ok === null) return r.result;
  // A rollout's result is `<outcome>: spark2 succeeded, spark3 skipped`: each node's outcome, not one node's state.
  if (r.action === 'rollout') return `${outcomeWord(r)}: ${r.result.replace(/^[a-z-]+: /, '')}${!r.ok && r.error ? `; ${onceWorded(r.error)}` : ''}`;
  if (r.outcome === 'rolled-back') return `FAILED, rolled back${r.error ? `: ${onceWorded(r.error)}` : ''}`;
  const why = r.error ? `: ${onceWorded(r.error)}` : '';
  if (r.ok) return `ok, node ${r.nodeState ?? '?'}`;
  const node = r.nodeState === 'failed' ? 'node marked failed' : r.nodeState === 'unchanged' ? 'node unchanged' : `node ${r.nodeState ?? '?'}`;
  return outcomeWord(r) === 'CANCELLED' ? `CANCELLED; ${node}` : `FAILED; ${node}${why}`;
}

/** `up best on spark2`: what a row deployed. */
function whatOf(r: Pick<HistoryRow, 'action' | 'profile' | 'node'>): string {
  return `${r.action}${r.profile ? ` ${r.profile}` : ''} on ${r.node ?? '?'}`;
}

/** The deploy a rollback undid, in words: the row's own when it is listed (`up best at 07:48:27Z`), else its run. */
function undoneWords(undid: string, rows: readonly HistoryRow[]): string {
  const undone = rows.find((x) => undid === `${x.workflowId}/${x.runId}`);
  return undone ? `${undone.action}${undone.profile ? ` ${undone.profile}` : ''} of ${utc(undone.time)}` : `run ${undid.split('/').pop()?.slice(0, 8) ?? undid}`;
}

/**
 * The history table: a header, one line per deploy (UTC ISO time, the one duration format), oldest row last as it
 * started; a rollback says what it undoes in its result. `wide`: each row's UI link (or workflow ID) below it, as
 * --json always has it (the link made every row 2-4 lines). `width` (a terminal's columns): each row is cut to it
 * with an ellipsis, so it stays one line; --wide and --json keep the whole result.
 */
export function historyText(rows: readonly HistoryRow[], hint: string | null, wide = false, width: number | null = null): string {
  if (rows.length === 0) return 'no deploys yet\n';
  const whats = rows.map(whatOf);
  const w = Math.max('DEPLOY'.length, ...whats.map((x) => x.length));
  const lines = [`${'STARTED (UTC)'.padEnd(20)}  ${'DEPLOY'.padEnd(w)}  ${'TOOK'.padStart(7)}  RESULT`];
  rows.forEach((r, i) => {
    const took = r.durationS === null ? '-' : duration(r.durationS);
    const undoes = r.undid ? `; undoes ${undoneWords(r.undid, rows)}` : '';
    const stopCut = r.drain && r.drain.cut > 0 ? `; the stop cut ${r.drain.cut} request${r.drain.cut === 1 ? '' : 's'}` : '';
    const row = `${utc(r.time).padEnd(20)}  ${(whats[i] ?? '').padEnd(w)}  ${took.padStart(7)}  ${plainText(resultWords(r))}${undoes}${stopCut}`;
    lines.push(width !== null && !wide ? cut(row, width) : row);
    if (wide) lines.push(`    ${r.ui ?? r.workflowId}`);
  });
  if (hint && wide) lines.push(hint);
  else lines.push('the steps of one: pulse model history --steps <workflow ID>   (the IDs: --wide)');
  return `${lines.join('\n')}\n`;
}

/** `--steps ID` as given: a workflow ID, or `workflowId/runId` (as --json's undid and the --wide view name a run). */
function runOf(id: string): { workflowId: string; runId?: string } {
  const slash = id.lastIndexOf('/');
  return slash > 0 && /^[0-9a-f-]{36}$/.test(id.slice(slash + 1)) ? { workflowId: id.slice(0, slash), runId: id.slice(slash + 1) } : { workflowId: id };
}

export async function run(opts: HistoryOptions): Promise<number> {
  const filter = { since: opts.since, failed: opts.failed };
  historyQuery(opts.node, filter); // a bad node name fails before any connection
  if (opts.node !== undefined) knownNode(opts.nodes, opts.node); // and so does one nodes.json does not know (exit 3)
  const t = await connectTemporal(opts);
  try {
    if (opts.steps !== null) return await printSteps(t.client, t.target, opts, filter);
    const rows = await listHistory(t.client, t.target, opts.node, opts.limit, filter);
    if (opts.json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    else process.stdout.write(historyText(rows, uiHint(t.target), opts.wide, process.stdout.isTTY ? (process.stdout.columns ?? 80) : null));
    return 0;
  } finally {
    await t.close();
  }
}

/** --steps [ID]: that deploy's steps, or (no ID) those of the newest deploy the filters list. */
async function printSteps(client: Client, target: ServerTarget, opts: HistoryOptions, filter: HistoryFilter): Promise<number> {
  const { deploySteps, stepsText } = await import('../history-steps.js');
  const newest = opts.steps === true ? (await listHistory(client, target, opts.node, 1, filter))[0] : undefined;
  if (opts.steps === true && newest === undefined) {
    process.stdout.write('no deploys yet\n');
    return 0;
  }
  const id = newest ? { workflowId: newest.workflowId, runId: newest.runId } : runOf(String(opts.steps));
  let d;
  try {
    d = await deploySteps(client, id.workflowId, id.runId);
  } catch (e) {
    // fetchHistory's gRPC NOT_FOUND (5) is not mapped to WorkflowNotFoundError by the SDK as describe's is
    const err = e as { name?: string; code?: number };
    if (err.name === 'WorkflowNotFoundError' || err.code === 5) throw new PulseError('config', `no deploy ${id.workflowId}${id.runId ? ` (run ${id.runId})` : ''} on the Temporal server`, { hint: 'the IDs: pulse model history --wide' });
    throw e;
  }
  const what = newest ? `${whatOf(newest)} at ${utc(newest.time)}: ` : '';
  if (opts.json) process.stdout.write(JSON.stringify({ ...id, ...d }, null, 2) + '\n');
  else process.stdout.write(stepsText(`${what}workflow ${id.workflowId}${id.runId ? ` (run ${id.runId})` : ''}`, d));
  return 0;
}
