/**
 * `pulse model watchdog on|off|list` (issue 16): one Temporal Schedule per node (id `pulse-watchdog-<node>`, overlap
 * SKIP, a short catch-up window) that starts watchdogWorkflow every interval with names and flags only; the worker
 * reads the node from its own nodes.json. `off` deletes the schedule, then runs one clearing watchdogWorkflow (the
 * record and the endpoint's watchdog reason go); `list` shows every schedule and the node's last verdict.
 */
import type { GlobalOptions } from '../options.js';
import { PulseError } from '../../runtime/errors.js';
import { duration, utc } from '../../runtime/format.js';
import type { WatchdogRecord, WatchdogRequest } from '../../runtime/model/index.js';
import { watchdogLine, watchdogScheduleId } from '../../runtime/fleet/watchdog.js';
import type { PulseTemporal } from '../deploy-client/temporal.js';
import { table } from '../render-text.js';

export interface WatchdogOptions extends GlobalOptions {
  verb: 'on' | 'off' | 'list';
  node: string;
  everyS: number;
  after: number;
  heal: boolean;
  healsPerHour: number;
  yes: boolean;
}

const PREFIX = watchdogScheduleId('');

async function nodeConfig(opts: WatchdogOptions) {
  const { loadNodesConfig, nodeOf } = await import('../../runtime/config/nodes.js');
  const { resolveNodesPath } = await import('../../runtime/state/paths.js');
  return nodeOf(loadNodesConfig(resolveNodesPath(opts.nodes)), opts.node);
}

async function record(node: string): Promise<WatchdogRecord | null> {
  const { trustedStateDir, readNodeState } = await import('../../runtime/state/state.js');
  return (await readNodeState(trustedStateDir(), node).catch(() => null))?.watchdog ?? null;
}

function out(opts: WatchdogOptions, json: unknown, text: string[]): void {
  process.stdout.write(opts.json ? `${JSON.stringify(json, null, 2)}\n` : `${text.join('\n')}\n`);
}

async function on(t: PulseTemporal, opts: WatchdogOptions, request: WatchdogRequest): Promise<string[]> {
  const { ScheduleOverlapPolicy } = await import('@temporalio/client');
  const { SA_ACTION, SA_NODE, TASK_QUEUE, WATCHDOG_WORKFLOW } = await import('../../workflows/definitions.js');
  const id = watchdogScheduleId(opts.node);
  const replaced = await t.client.schedule.getHandle(id).delete().then(() => true, (e: unknown) => {
    if ((e as Error)?.name === 'ScheduleNotFoundError') return false;
    throw e;
  });
  await t.client.schedule.create({
    scheduleId: id,
    spec: { intervals: [{ every: `${request.everyS}s` }] },
    action: {
      type: 'startWorkflow', workflowType: WATCHDOG_WORKFLOW, workflowId: id, taskQueue: TASK_QUEUE, args: [request],
      typedSearchAttributes: [{ key: SA_NODE, value: opts.node }, { key: SA_ACTION, value: 'watchdog' }],
      staticSummary: `watchdog check of ${opts.node}`,
    },
    // SKIP: a check (or its heal) still running takes the place of the next; a server that was down runs at most
    // the checks of the last interval (never a burst of missed ones).
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: `${Math.max(10, request.everyS)}s` },
    state: { note: `pulse model watchdog on --node ${opts.node}`, triggerImmediately: true },
  });
  const { ensureBackgroundWorker, workerPolls } = await import('../deploy-client/index.js');
  // The embedded default: a background worker runs the checks, and stays while a watchdog schedule exists.
  const bg = t.target.embedded ? await ensureBackgroundWorker(t, { nodes: opts.nodes, gateway: true }) : null;
  const served = await workerPolls(t).catch(() => true);
  return [
    ...(bg && 'pid' in bg ? [`checks run on the background worker (pid ${bg.pid}, log ${bg.logFile}) while a watchdog schedule exists`] : []),
    ...(bg && 'failed' in bg ? [`warning: no background worker for the checks: ${bg.failed}`] : []),
    `watchdog ${replaced ? 'updated' : 'on'} for ${opts.node}: every ${request.everyS}s, endpoint off after ${request.after} failed check(s) in a row, on again after ${request.after} good one(s)` +
      (request.heal ? `; heals last known good, at most ${request.healsPerHour} an hour` : '; no healing (add --heal)'),
    ...(request.confirmed ? [] : (await nodeConfig(opts)).protected ? [`${opts.node} is protected: container checks only, no HTTP request (turn it on with --yes to allow them)`] : []),
    `schedule ${id}`,
    ...(served ? [] : ['warning: no pulse worker polls now; the checks wait until one runs (`pulse worker`, docs/PRODUCTION.md)']),
  ];
}

async function off(t: PulseTemporal, opts: WatchdogOptions): Promise<string[]> {
  const { TASK_QUEUE, WATCHDOG_WORKFLOW } = await import('../../workflows/definitions.js');
  const id = watchdogScheduleId(opts.node);
  const existed = await t.client.schedule.getHandle(id).delete().then(() => true, (e: unknown) => {
    if ((e as Error)?.name === 'ScheduleNotFoundError') return false;
    throw e;
  });
  const request: WatchdogRequest = { action: 'watchdog', version: 1, node: opts.node, everyS: 60, after: 1, heal: false, healsPerHour: 1, confirmed: false, clear: true };
  const { workerPolls } = await import('../deploy-client/index.js');
  const served = await workerPolls(t).catch(() => true);
  // A check the schedule started before it was deleted would write its record after the clear: wait for it first.
  if (served) await checksRunning(t, opts.node);
  const handle = await t.client.workflow.start(WATCHDOG_WORKFLOW, { workflowId: `${id}-off`, taskQueue: TASK_QUEUE, args: [request] });
  if (served) await handle.result();
  return [
    existed ? `watchdog off for ${opts.node}: schedule ${id} removed` : `no watchdog schedule for ${opts.node}`,
    served ? 'its record is cleared; the gateway file no longer names a watchdog reason for it' : 'warning: no pulse worker polls now; its record is cleared when one runs',
  ];
}

/** Waits (up to 3 minutes: a check with its heal) for the node's scheduled checks that still run. */
async function checksRunning(t: PulseTemporal, node: string): Promise<void> {
  const query = `WorkflowType = 'watchdogWorkflow' AND PulseNode = '${node}' AND ExecutionStatus = 'Running'`;
  const waits: Promise<unknown>[] = [];
  for await (const w of t.client.workflow.list({ query })) waits.push(t.client.workflow.getHandle(w.workflowId, w.runId).result().catch(() => undefined));
  await Promise.race([Promise.all(waits), new Promise((r) => setTimeout(r, 180_000).unref())]);
}

export interface Row {
  node: string;
  schedule: string;
  everyS: number | null;
  heal: boolean;
  after: number | null;
  confirmed: boolean;
  nextRun: string | null;
  paused: boolean;
  record: WatchdogRecord | null;
}

async function list(t: PulseTemporal): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const s of t.client.schedule.list()) {
    if (!s.scheduleId.startsWith(PREFIX)) continue;
    const d = await t.client.schedule.getHandle(s.scheduleId).describe();
    const a = d.action.type === 'startWorkflow' ? (d.action.args?.[0] as Partial<WatchdogRequest> | undefined) : undefined;
    const node = a?.node ?? s.scheduleId.slice(PREFIX.length);
    rows.push({
      node, schedule: s.scheduleId, everyS: a?.everyS ?? null, heal: a?.heal ?? false, after: a?.after ?? null, confirmed: a?.confirmed ?? false,
      nextRun: d.info.nextActionTimes[0]?.toISOString() ?? null, paused: d.state.paused, record: await record(node),
    });
  }
  return rows.sort((x, y) => x.node.localeCompare(y.node));
}

/**
 * `watchdog list` as a table under a header, times in the one UTC format (issue 30 item 12: no header, `.000Z`):
 * NODE, EVERY, AFTER (failed checks before the endpoint is disabled), HEAL, NEXT (UTC, or PAUSED), LAST VERDICT.
 */
export function listTable(rows: readonly Row[], now: Date): string[] {
  const cells = rows.map((r) => [
    r.node,
    r.everyS === null ? '?' : duration(r.everyS),
    r.after === null ? '?' : String(r.after),
    r.heal ? (r.confirmed ? 'yes (--yes)' : 'yes') : 'no',
    r.paused ? 'PAUSED' : r.nextRun ? utc(r.nextRun) : '-',
    r.record ? watchdogLine(r.record, now) : 'no check yet',
  ]);
  return table([['NODE', 'EVERY', 'AFTER', 'HEAL', 'NEXT (UTC)', 'LAST VERDICT'], ...cells]);
}

export async function run(opts: WatchdogOptions): Promise<number> {
  if (opts.verb !== 'list') {
    const node = await nodeConfig(opts); // an unknown node, a refusal: before any Temporal connection
    if (opts.verb === 'on' && opts.heal && node.protected && !opts.yes) {
      throw new PulseError('refused', `node ${opts.node} is protected; add --yes to let the watchdog heal it`);
    }
  }
  const { connectTemporal } = await import('../deploy-client/temporal.js');
  const t = await connectTemporal(opts);
  try {
    if (opts.verb === 'list') {
      const rows = await list(t);
      const now = new Date();
      out(opts, { schedules: rows }, rows.length === 0 ? ['no watchdog schedules (pulse model watchdog on --node N)'] : listTable(rows, now));
      return 0;
    }
    if (opts.verb === 'off') {
      const lines = await off(t, opts);
      out(opts, { node: opts.node, off: true }, lines);
      return 0;
    }
    const request: WatchdogRequest = {
      action: 'watchdog', version: 1, node: opts.node, everyS: opts.everyS, after: opts.after, heal: opts.heal, healsPerHour: opts.healsPerHour, confirmed: opts.yes,
    };
    const lines = await on(t, opts, request);
    out(opts, { node: opts.node, schedule: watchdogScheduleId(opts.node), request }, lines);
    return 0;
  } finally {
    await t.close();
  }
}
