/** `pulse model history [--node] [--limit] [--json]`: past deploys from Temporal visibility, newest first. */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { HistoryOptions } from '../options.js';
import type { DeployResult } from '../../runtime/model/index.js';
import { PulseError } from '../../runtime/errors.js';
import { knownNode } from '../known-node.js';
import { connectTemporal, uiHint, uiLink, type ServerTarget } from '../temporal.js';

export interface HistoryRow {
  time: string;
  node: string | null;
  action: string;
  profile: string | null;
  result: string;
  durationS: number | null;
  workflowId: string;
  runId: string;
  ui: string | null;
}

/** Visibility query for pulse deploys, optionally of one node (node names are checked: they go into the query). */
export function historyQuery(node: string | undefined): string {
  const base = "WorkflowType IN ('upWorkflow', 'downWorkflow')";
  if (node === undefined) return base;
  if (!/^[A-Za-z0-9._-]+$/.test(node)) throw new PulseError('usage', `--node: "${node}" is not a valid node name`);
  return `${base} AND PulseNode = '${node}'`;
}

function describeResult(r: unknown): string | null {
  if (!r || typeof r !== 'object' || !('ok' in r)) return null;
  const d = r as DeployResult;
  return d.ok ? `ok (${d.state})` : `failed (${d.state})${d.error ? `: ${d.error}` : ''}`;
}

/** ok/failed with the node state, from the DeployResult (a failed deploy carries it in its failure's details). */
async function resultOf(client: Client, info: WorkflowExecutionInfo): Promise<string> {
  const status = info.status.name;
  if (status === 'RUNNING') return 'running';
  const fallback = status.toLowerCase().replace('_', '-');
  if (status !== 'COMPLETED' && status !== 'FAILED') return fallback;
  try {
    return describeResult(await client.workflow.getHandle(info.workflowId, info.runId).result()) ?? fallback;
  } catch (e) {
    const details = ((e as { cause?: { details?: unknown[] } }).cause?.details ?? [])[0];
    return describeResult(details) ?? fallback;
  }
}

async function toRow(client: Client, target: ServerTarget, info: WorkflowExecutionInfo): Promise<HistoryRow> {
  const sa = info.typedSearchAttributes;
  const { SA_NODE, SA_PROFILE, SA_ACTION } = await import('../../workflows/definitions.js');
  const end = info.closeTime?.getTime();
  return {
    time: info.startTime.toISOString(),
    node: sa.get(SA_NODE) ?? null,
    action: sa.get(SA_ACTION) ?? info.type.replace(/Workflow$/, ''),
    profile: sa.get(SA_PROFILE) ?? null,
    result: await resultOf(client, info),
    durationS: end === undefined ? null : Math.round((end - info.startTime.getTime()) / 100) / 10,
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

function printTable(rows: HistoryRow[], hint: string | null): void {
  if (rows.length === 0) {
    process.stdout.write('no deploys yet\n');
    return;
  }
  for (const r of rows) {
    const dur = r.durationS === null ? 'running' : `${r.durationS} s`;
    const what = `${r.action}${r.profile ? ` ${r.profile}` : ''} on ${r.node ?? '?'}`;
    process.stdout.write(`${r.time.slice(0, 19).replace('T', ' ')}Z  ${what.padEnd(26)} ${dur.padStart(9)}  ${r.result}\n    ${r.ui ?? r.workflowId}\n`);
  }
  if (hint) process.stdout.write(`${hint}\n`);
}

export async function run(opts: HistoryOptions): Promise<number> {
  historyQuery(opts.node); // a bad node name fails before any connection
  if (opts.node !== undefined) knownNode(opts.nodes, opts.node); // and so does one nodes.json does not know (exit 3)
  const t = await connectTemporal(opts);
  try {
    const rows = await listHistory(t.client, t.target, opts.node, opts.limit);
    if (opts.json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    else printTable(rows, uiHint(t.target));
    return 0;
  } finally {
    await t.close();
  }
}
