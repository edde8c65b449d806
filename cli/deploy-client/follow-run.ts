/**
 * Follows one deploy from the Temporal server (history events + describe), never from a worker, so it survives a
 * worker restart: one line per step as it starts and ends (with --verbose, then the raw records its result carries),
 * a wait-progress line, then the final DeployResult.
 * Histories stay small (heartbeats add no events), so each poll re-reads the whole history and skips seen events.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { DeployResult, ReadinessEstimate, StepRaw, WaitProgress } from '../../runtime/model/index.js';
import type { FollowOutcome } from '../follow-outcome.js';
import { cautionOf, noteOf, noticeOf, stepOfActivity, verdictOf } from '../../runtime/steps/catalog.js';
import type { ProgressPrinter } from '../progress-printer.js';

/** Loosely typed slices of the proto messages we read (the SDK's generated types are unwieldy). */
interface Payload { data?: Uint8Array | null; metadata?: Record<string, Uint8Array> | null }
interface Payloads { payloads?: Payload[] | null }
interface Ts { seconds?: number | { toNumber(): number } | null; nanos?: number | null }
interface FailureLike { message?: string | null; cause?: FailureLike | null; applicationFailureInfo?: { type?: string | null; details?: Payloads | null } | null; canceledFailureInfo?: { details?: Payloads | null } | null }
export interface HistoryEventLike {
  eventId?: number | { toNumber(): number } | null;
  eventTime?: Ts | null;
  userMetadata?: { summary?: Payload | null } | null;
  activityTaskScheduledEventAttributes?: { activityId?: string | null; activityType?: { name?: string | null } | null } | null;
  activityTaskCompletedEventAttributes?: { scheduledEventId?: unknown; result?: Payloads | null } | null;
  activityTaskFailedEventAttributes?: { scheduledEventId?: unknown; failure?: FailureLike | null } | null;
  activityTaskTimedOutEventAttributes?: { scheduledEventId?: unknown; failure?: FailureLike | null } | null;
  activityTaskCanceledEventAttributes?: { scheduledEventId?: unknown } | null;
  workflowExecutionCompletedEventAttributes?: { result?: Payloads | null } | null;
  workflowExecutionFailedEventAttributes?: { failure?: FailureLike | null } | null;
  workflowExecutionCanceledEventAttributes?: { details?: Payloads | null } | null;
  workflowExecutionTerminatedEventAttributes?: { reason?: string | null } | null;
  workflowExecutionTimedOutEventAttributes?: object | null;
  workflowExecutionContinuedAsNewEventAttributes?: { newExecutionRunId?: string | null } | null;
  workflowExecutionStartedEventAttributes?: { input?: Payloads | null } | null;
  childWorkflowExecutionStartedEventAttributes?: { workflowExecution?: { workflowId?: string | null; runId?: string | null } | null } | null;
}

const num = (v: unknown): number => (v && typeof v === 'object' && 'toNumber' in v ? (v as { toNumber(): number }).toNumber() : Number(v ?? 0));
const tsMs = (t: Ts | null | undefined): number => (t ? num(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0);

/** Decodes the first payload (JSON), or undefined. */
export function decodeFirst(p: Payloads | null | undefined): unknown {
  const first = p?.payloads?.[0];
  if (!first) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(first as never);
  } catch {
    return undefined;
  }
}

function isDeployResult(v: unknown): v is DeployResult {
  return typeof v === 'object' && v !== null && 'ok' in v && 'action' in v && 'steps' in v;
}

/** The readiness estimate a state step's result carries (PublishResult.readiness), or null. */
export function estimateOf(r: unknown): ReadinessEstimate | null {
  const e = typeof r === 'object' && r !== null ? (r as { readiness?: unknown }).readiness : undefined;
  if (typeof e !== 'object' || e === null) return null;
  const { estimateS, samples, basis } = e as Partial<ReadinessEstimate>;
  if (!(estimateS === null || (typeof estimateS === 'number' && Number.isFinite(estimateS))) || typeof samples !== 'number') return null;
  return { estimateS: estimateS ?? null, samples, basis: basis === 'identity' || basis === 'profile' ? basis : 'none' };
}

/** What a detach says of the plan: its rollback command and whether the node is protected (cancel needs --yes). */
function planOf(input: unknown): { rollbackHint: string | null; protectedNode: boolean } {
  const p = typeof input === 'object' && input !== null ? (input as { rollbackHint?: unknown; protected?: unknown; confirmed?: unknown }) : {};
  // A rollback request carries no `protected`: its `confirmed` (--yes) is what a protected node needed.
  return { rollbackHint: typeof p.rollbackHint === 'string' ? p.rollbackHint : null, protectedNode: p.protected === true || (p.protected === undefined && p.confirmed === true) };
}

function isWaitProgress(v: unknown): v is WaitProgress {
  return typeof v === 'object' && v !== null && 'attempt' in v && 'elapsedS' in v && 'timeoutS' in v;
}

/**
 * A failure's message and type: the innermost message for a step (the ActivityFailure wrapper says nothing), the
 * outermost for the workflow (DeployFailed's message is "<step>: <first error>"). Details: the first DeployResult.
 */
function failureText(f: FailureLike | null | undefined, outermost = false): { message: string; type: string | null; details: unknown } {
  let message = f?.message || 'unknown failure';
  let type: string | null = null;
  let details: unknown;
  for (let cur = f; cur; cur = cur.cause) {
    if (cur.message && !outermost) message = cur.message;
    type ??= cur.applicationFailureInfo?.type ?? null;
    const d = decodeFirst(cur.applicationFailureInfo?.details ?? cur.canceledFailureInfo?.details);
    if (details === undefined && isDeployResult(d)) details = d;
  }
  return { message, type, details };
}

interface Scheduled {
  name: string;
  /** pulse's bookkeeping (catalog StepDef.bookkeeping): its line only with --verbose or on a failure. */
  bookkeeping: boolean;
  at: number;
  type: string;
  activityId: string;
}

/** What a finished step says beside its ✓: its catalog row's note (runtime/steps/catalog.ts), found by type and summary. */
export function stepNote(activityType: string, r: unknown, summary: string | null = null): string | null {
  const def = stepOfActivity(activityType, summary);
  return def ? noteOf(def, r) : null;
}

/** Why a step that completed fails the deploy: its catalog row's verdict (null: it passed, or no row). */
export function stepVerdict(activityType: string, r: unknown, summary: string | null = null): string | null {
  const def = stepOfActivity(activityType, summary);
  return def ? verdictOf(def, r) : null;
}

/** The raw `@pulse` lines a step result carries (StepRaw); none for a step without a script or an older history. */
export function rawOf(r: unknown): string[] {
  const raw = typeof r === 'object' && r !== null ? (r as StepRaw).raw : undefined;
  return Array.isArray(raw) ? raw.filter((l): l is string => typeof l === 'string') : [];
}

/** What history events are told to: the live printer, or `history --steps`' table (cli/commands/history-steps.ts). */
export type StepSink = Pick<ProgressPrinter, 'stepStarted' | 'stepEnded' | 'rawRecords' | 'readinessEstimate'>;

/**
 * A whole history told to `sink` at once (a deploy that closed, or one read so far): the same step lines a follow
 * prints, in order; returns how it closed, or null while it runs.
 */
export function replayHistory(events: readonly HistoryEventLike[], sink: StepSink): FollowOutcome | null {
  const scheduled = new Map<number, Scheduled>();
  for (const ev of events) {
    const outcome = applyEvent(ev, scheduled, sink);
    if (outcome) return outcome;
  }
  return null;
}

/** Turns history events into printer calls; returns the outcome when the close event is among them. */
function applyEvent(ev: HistoryEventLike, scheduled: Map<number, Scheduled>, p: StepSink): FollowOutcome | null {
  const at = tsMs(ev.eventTime);
  const sched = ev.activityTaskScheduledEventAttributes;
  if (sched) {
    const summary = decodeFirst({ payloads: ev.userMetadata?.summary ? [ev.userMetadata.summary] : [] });
    const name = typeof summary === 'string' && summary ? summary : (sched.activityType?.name ?? 'step');
    const bookkeeping = stepOfActivity(sched.activityType?.name ?? '', name)?.bookkeeping === true;
    scheduled.set(num(ev.eventId), { name, bookkeeping, at, type: sched.activityType?.name ?? '', activityId: sched.activityId ?? '' });
    p.stepStarted(name, bookkeeping);
    return null;
  }
  const end = ev.activityTaskCompletedEventAttributes ?? ev.activityTaskFailedEventAttributes ?? ev.activityTaskTimedOutEventAttributes ?? ev.activityTaskCanceledEventAttributes;
  if (end) {
    const s = scheduled.get(num(end.scheduledEventId));
    const failure = 'failure' in end ? (end.failure as FailureLike | null) : null;
    const done = ev.activityTaskCompletedEventAttributes;
    const value = done ? decodeFirst(done.result) : undefined;
    // A step can complete and still fail the deploy (preflight's checks, verify's answers): it gets its ✗ here.
    const wrong = done ? stepVerdict(s?.type ?? '', value, s?.name ?? null) : null;
    const def = done ? stepOfActivity(s?.type ?? '', s?.name ?? null) : undefined;
    // A step that completed and cut requests (the drain, the stop) is marked `!`, not ✓.
    const ok = def && cautionOf(def, value) ? 'warned' : 'ok';
    const outcome = done ? (wrong === null ? ok : 'failed') : ev.activityTaskCanceledEventAttributes ? 'cancelled' : 'failed';
    const note = wrong ?? (done ? stepNote(s?.type ?? '', value, s?.name ?? null) : failure ? failureText(failure).message : null);
    // A bookkeeping step with news (a corrupt lock it cleared) shows its line like any step.
    const news = def ? noticeOf(def, value) : null;
    p.stepEnded(s?.name ?? 'step', outcome, s ? at - s.at : 0, note, s?.bookkeeping === true && news === null);
    p.rawRecords(rawOf(value));
    const estimate = estimateOf(value);
    if (estimate) p.readinessEstimate(estimate); // the 'starting' state step's answer (issue 18)
    return null;
  }
  return closeOutcome(ev);
}

function closeOutcome(ev: HistoryEventLike): FollowOutcome | null {
  if (ev.workflowExecutionCompletedEventAttributes) {
    const r = decodeFirst(ev.workflowExecutionCompletedEventAttributes.result);
    return { kind: 'closed', status: 'completed', result: isDeployResult(r) ? r : null, error: null, errorType: null };
  }
  const failed = ev.workflowExecutionFailedEventAttributes;
  if (failed) {
    const f = failureText(failed.failure, true);
    return { kind: 'closed', status: 'failed', result: isDeployResult(f.details) ? f.details : null, error: f.message, errorType: f.type };
  }
  if (ev.workflowExecutionCanceledEventAttributes) {
    const d = decodeFirst(ev.workflowExecutionCanceledEventAttributes.details);
    return { kind: 'closed', status: 'cancelled', result: isDeployResult(d) ? d : null, error: 'the deploy was cancelled', errorType: null };
  }
  if (ev.workflowExecutionTerminatedEventAttributes) {
    const reason = ev.workflowExecutionTerminatedEventAttributes.reason;
    return { kind: 'closed', status: 'terminated', result: null, error: `the deploy was terminated${reason ? `: ${reason}` : ''}`, errorType: null };
  }
  if (ev.workflowExecutionTimedOutEventAttributes) {
    return { kind: 'closed', status: 'timed-out', result: null, error: 'the deploy reached its workflow timeout', errorType: null };
  }
  return null;
}

export interface FollowOptions {
  printer: ProgressPrinter;
  /** Aborted by SIGINT: stop following, the deploy goes on. */
  signal: AbortSignal;
  pollMs?: number;
}

/** Follows the run until it closes or the signal aborts. Transient server errors are retried quietly. */
export async function followRun(client: Client, workflowId: string, runId: string, opts: FollowOptions): Promise<FollowOutcome> {
  const handle = client.workflow.getHandle(workflowId, runId);
  // The close wakes the loop at once (a long poll on the server, as handle.result() waits), so the user's command
  // ends when the deploy does, not up to one poll interval later; the periodic read stays for the step lines and
  // the wait's progress, which a heartbeat carries without a history event.
  const stopWaiting = new AbortController();
  const closed = waitForClose(client, workflowId, runId, stopWaiting.signal);
  try {
    return await followLoop(client, handle, closed, opts);
  } finally {
    stopWaiting.abort();
  }
}

async function followLoop(client: Client, handle: ReturnType<Client['workflow']['getHandle']>, closed: Promise<void>, opts: FollowOptions): Promise<FollowOutcome> {
  const scheduled = new Map<number, Scheduled>();
  let seen = 0;
  let failingSince: number | null = null;
  let plan: ReturnType<typeof planOf> = { rollbackHint: null, protectedNode: false }; // its first input, for a detach's lines
  for (;;) {
    if (opts.signal.aborted) return { kind: 'detached', ...plan };
    try {
      const history = await handle.fetchHistory();
      for (const ev of (history.events ?? []) as HistoryEventLike[]) {
        if (num(ev.eventId) <= seen) continue;
        seen = num(ev.eventId);
        if (ev.workflowExecutionStartedEventAttributes) plan = planOf(decodeFirst(ev.workflowExecutionStartedEventAttributes.input));
        const child = ev.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
        if (child?.workflowId && child.runId && (await followChild(client, child.workflowId, child.runId, opts)) === 'detached') return { kind: 'detached', ...plan };
        const outcome = applyEvent(ev, scheduled, opts.printer);
        if (outcome) return outcome;
      }
      await showPending(handle, opts.printer, scheduled);
      if (failingSince !== null) opts.printer.note('the Temporal server answers again');
      failingSince = null;
    } catch (e) {
      failingSince ??= Date.now();
      if (Date.now() - failingSince > 10_000) {
        opts.printer.note(`cannot read the deploy from the Temporal server (${(e as Error).message}); still trying`);
        failingSince = Date.now();
      }
    }
    await sleep(opts.pollMs ?? 1000, opts.signal, closed);
  }
}

/** temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT (the proto package is not ours). */
const CLOSE_EVENT = 2;

/**
 * Resolves when the run has a close event (the server answers a long poll on it then), never on an error: a lost
 * or refused long poll leaves the periodic read to notice the close, as before.
 */
function waitForClose(client: Client, workflowId: string, runId: string, signal: AbortSignal): Promise<void> {
  const req = {
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    skipArchival: true,
    waitNewEvent: true,
    historyEventFilterType: CLOSE_EVENT,
    nextPageToken: undefined as Uint8Array | null | undefined,
  };
  return new Promise((resolve) => {
    void (async () => {
      while (!signal.aborted) {
        const res = await client.connection.withAbortSignal(signal, () => client.workflowService.getWorkflowExecutionHistory(req));
        if ((res.history?.events ?? []).length > 0) return resolve();
        req.nextPageToken = res.nextPageToken;
      }
    })().catch(() => undefined);
  });
}

/**
 * An up's auto-rollback (its one child workflow, workflows/auto-rollback.ts) as a section of its own: its title, its
 * steps and live line indented, and how it ended. Read like the up, from the server's history.
 */
async function followChild(client: Client, workflowId: string, runId: string, opts: FollowOptions): Promise<'detached' | 'closed'> {
  const p = opts.printer;
  p.section(`↺ auto-rollback: back to the .env that ran before (workflow ${workflowId})`);
  const o = await followRun(client, workflowId, runId, opts);
  if (o.kind === 'detached') {
    p.endSection(null);
    return 'detached';
  }
  const r = o.result;
  const end = r?.ok
    ? `↺ auto-rollback: ok, ${r.profile ?? 'the previous .env'} serves again, node ${r.state}`
    : `↺ auto-rollback: FAILED${r ? `, node ${r.state}` : `: ${o.error ?? o.status}`}`;
  p.endSection(end);
  return 'closed';
}

async function showPending(handle: ReturnType<Client['workflow']['getHandle']>, p: ProgressPrinter, scheduled: Map<number, Scheduled>): Promise<void> {
  const d = await handle.describe();
  for (const a of (d.raw.pendingActivities ?? []) as { activityId?: string | null; activityType?: { name?: string | null } | null; heartbeatDetails?: Payloads | null; attempt?: number | null; lastFailure?: FailureLike | null }[]) {
    const hb = decodeFirst(a.heartbeatDetails);
    if (isWaitProgress(hb)) p.waitProgress(hb);
    if ((a.attempt ?? 1) > 1 && a.lastFailure) {
      const name = [...scheduled.values()].find((s) => s.activityId === a.activityId)?.name ?? a.activityType?.name ?? 'step';
      p.retrying(name, a.attempt ?? 2, failureText(a.lastFailure).message);
    }
  }
}

/** Sleeps `ms`, ended early by the signal or `wake`; its timer is cleared either way (a pending one would hold the exit). */
function sleep(ms: number, signal: AbortSignal, wake?: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
    void wake?.then(done);
  });
}
