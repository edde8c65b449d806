/**
 * The two waits of a deploy (memory gate, readiness) as ONE long activity each that probes every second and
 * heartbeats its progress. Why not retry-policy polling (one short activity per probe, retried until success)?
 * Readiness must be noticed within about a second, and a retry policy with a 1 s interval over a 30-minute wait
 * would write thousands of attempts' worth of failures and events; a heartbeating activity writes three history
 * events whatever the wait lasts, and its heartbeat carries live progress (WaitProgress) for the CLI and the UI.
 * Readiness does not wait for its next probe to notice the server: it follows the server's log (a WaitWatch,
 * activities/log-watch.ts) and probes at once on uvicorn's startup line or the container's end, with a slower
 * periodic probe (ActivityDeps.readinessProbeMs) as the fallback for a build that never logs the line.
 *
 * Crash-resume: the heartbeat details are a checkpoint (attempt count, and the time the wait has run so far).
 * When a worker dies, Temporal notices the missing heartbeat and retries the activity elsewhere; the new attempt
 * continues from the checkpoint, so a crash neither restarts the budget nor the attempt count.
 *
 * Clocks: the budget is ELAPSED time, each attempt measuring its own share with its worker's monotonic clock and
 * adding it to the checkpoint's. No wall-clock instant crosses from one worker to another, so a resuming worker
 * whose clock is 40 minutes ahead (or behind) sees exactly the budget that is left. The time between a worker's last
 * heartbeat and the retry (at most the heartbeat timeout plus a retry interval) is not counted by any worker: the
 * workflow bounds that with a server-side scheduleToClose timeout (workflows/options.ts), measured by the Temporal
 * server's one clock, so repeated crashes cannot stretch a wait without limit either.
 */
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { StepOptions } from '../runtime/steps/index.js';
import { FAILURES } from '../runtime/failures.js';
import type { WaitProgress } from '../runtime/model/index.js';
import { classify, toFailure } from './errors.js';
import { serverLogOf } from '../runtime/vllm/phase.js';

/**
 * What a wait that timed out did not see, in words. The saga puts the step in front (`readiness: …`), so the step's
 * name is not repeated here (it read `readiness: readiness not reached`).
 */
const NOT_REACHED: Record<WaitProgress['step'], string> = {
  readiness: 'the server did not answer GET /v1/models with 200',
  memory: 'MemAvailable did not reach the memory gate',
  drain: 'the server still had requests in flight',
};

/** Even after a probe slower than the interval, pause a little so a wait never busy-loops against a node. */
const MIN_PAUSE_MS = 100;
/**
 * A wait heartbeats at least this often, also while one probe runs long and between the slower probes of a watched
 * wait: its heartbeat timeout (workflows/options.ts WAIT_HEARTBEAT_TIMEOUT_S) is a few seconds, so a dead worker's
 * wait moves to another worker within seconds.
 */
export const WAIT_BEAT_MS = 1000;
/**
 * After a watch's wake whose probe was not yet ready, the next few probes come this soon: uvicorn logs its startup
 * line just before its socket listens, so the probe right after the line may be refused.
 */
const QUICK_MS = 200;
export const QUICK_PROBES = 5;
/** The failure type of a wait handed back by a worker that shuts down (retryable: never in NON_RETRYABLE_FAILURES). */
export const HAND_BACK = 'WorkerShutdown';

/** Heartbeat details of a wait: the progress the CLI shows, plus what a retried attempt needs to resume. */
export interface WaitCheckpoint extends WaitProgress {
  /** Time this wait has run, summed over its attempts (each measured with its own worker's monotonic clock). */
  elapsedMs: number;
  /** What the probe asked to keep across probes and attempts (readiness: the container it saw first); JSON, no secret. */
  memo?: unknown;
}

export interface ProbeAnswer<T> {
  done: boolean;
  /** One line for the progress display, e.g. "HTTP 503" or "MemAvailable 93.1 GiB < 100 GiB". */
  answer: string;
  value: T;
  /** Kept for the next probes (and a resumed attempt): replaces the memo when set. */
  memo?: unknown;
  /** Readiness: the server's phase from its log (null: none known in this tail, the last one seen stays shown). */
  phase?: WaitProgress['phase'];
  lastLine?: WaitProgress['lastLine'];
  /** Drain: the sample's counts, heartbeated for the live line. */
  drain?: WaitProgress['drain'];
}

export interface WaitSpec<T> {
  step: WaitProgress['step'];
  /** Shown with the progress (readiness: how long it usually takes here); never changes the budget. */
  estimate?: WaitProgress['estimate'];
  timeoutS: number;
  intervalMs: number;
  /** A clock that never jumps (ms): only differences of it are used, never an instant from another worker. */
  monotonic: () => number;
  /** Replaces the activity's cancellation-aware sleep (tests on the time-skipping server). */
  sleep?: (ms: number) => Promise<void>;
  probe: (opts: StepOptions, memo: unknown) => Promise<ProbeAnswer<T>>;
  /**
   * Runs before each probe (the node lock: renewed when half its lease has passed, the wait fails untouched when it
   * is lost). Its failure ends the wait; it is not a "not yet".
   */
  guard?: (signal: AbortSignal) => Promise<void>;
  /**
   * The first this many probes come QUICK_MS apart before the interval applies (memory: right after the stop the
   * memory is coming free, and a 1 s cadence would cost up to a second the stop itself did not).
   */
  quickStart?: number;
  /**
   * Readiness: what can end a pause early (activities/log-watch.ts: the server's startup line, the container's end)
   * and tells the phase between probes. With a watch, `intervalMs` is the slower fallback probe.
   */
  watch?: WaitWatch;
  /**
   * Called when the wait ends, with the last probe's value and the checkpoint: at its success (`expired` false), and
   * when the budget runs out (`expired` true), where it returns the wait's value instead of the Timeout failure (the
   * drain: a budget that runs out is not a failure, the stop goes on and reports what it cut).
   */
  settle?: (value: T | undefined, cp: WaitCheckpoint, expired: boolean) => T;
  /**
   * Aborted when this worker begins a graceful shutdown: the wait hands itself back at once (a retryable failure
   * after its last checkpoint) instead of holding the shutdown for its grace time, and resumes on another worker.
   */
  handBack?: AbortSignal;
}

/** The part of a LogWatch a wait uses. */
export interface WaitWatch {
  ensure(): void;
  woken(): Promise<void>;
  consume(): void;
  take(): Pick<WaitProgress, 'phase' | 'lastLine'>;
  stop(): void;
}

function isCheckpoint(v: unknown, step: string): v is WaitProgress & { elapsedMs?: number } {
  const c = v as Partial<WaitCheckpoint> | null;
  return !!c && c.step === step && typeof c.attempt === 'number' && (typeof c.elapsedMs === 'number' || typeof c.elapsedS === 'number');
}

/**
 * Where this attempt starts: the previous attempt's checkpoint, or zero. A checkpoint from before elapsedMs existed
 * (it held wall-clock instants) resumes from its elapsedS, and its instants are dropped.
 */
export function startCheckpoint(details: unknown, step: WaitProgress['step'], timeoutS: number): WaitCheckpoint {
  if (isCheckpoint(details, step)) {
    const elapsedMs = typeof details.elapsedMs === 'number' ? details.elapsedMs : details.elapsedS * 1000;
    const memo = (details as { memo?: unknown }).memo;
    const moved = typeof details.movedAtS === 'number' ? { movedAtS: details.movedAtS } : {};
    return { step, attempt: details.attempt, lastAnswer: details.lastAnswer, elapsedS: details.elapsedS, timeoutS, elapsedMs, ...(memo !== undefined ? { memo } : {}), ...serverLogOf(details), ...moved };
  }
  return { step, attempt: 0, lastAnswer: 'not probed yet', elapsedS: 0, timeoutS, elapsedMs: 0 };
}

/** Probe until done; a probe that fails in a retryable way (link dropped, not ready) counts as "not yet". */
export async function pollUntil<T>(spec: WaitSpec<T>): Promise<T> {
  let release = (): void => undefined;
  const handBack = spec.handBack;
  // One listener on the worker's shutdown signal per wait, removed when the wait ends.
  const handedBack = handBack
    ? new Promise<void>((resolve) => {
        if (handBack.aborted) return resolve();
        const on = (): void => resolve();
        handBack.addEventListener('abort', on, { once: true });
        release = () => handBack.removeEventListener('abort', on);
      })
    : null;
  try {
    return await poll(spec, handedBack);
  } finally {
    release();
    spec.watch?.stop();
  }
}

async function poll<T>(spec: WaitSpec<T>, handedBack: Promise<void> | null): Promise<T> {
  const ctx = Context.current();
  const cp = startCheckpoint(ctx.info.heartbeatDetails, spec.step, spec.timeoutS);
  if (spec.estimate) cp.estimate = spec.estimate;
  const before = cp.elapsedMs;
  const t0 = spec.monotonic();
  const elapsed = (): number => before + Math.max(0, spec.monotonic() - t0);
  // When the server's phase or log line last changed (readiness): the CLI says a stall, the timeout names the phase.
  let movedKey = serverKey(cp);
  const moved = (): void => {
    const k = serverKey(cp);
    if (k !== movedKey || cp.movedAtS === undefined) cp.movedAtS = cp.elapsedS;
    movedKey = k;
  };
  const beat = (): void => {
    const seen = spec.watch?.take();
    if (seen?.phase) cp.phase = seen.phase;
    if (seen?.lastLine !== undefined) cp.lastLine = seen.lastLine;
    cp.elapsedMs = elapsed();
    cp.elapsedS = Math.round(cp.elapsedMs / 1000);
    if (spec.step === 'readiness') moved();
    ctx.heartbeat(cp);
  };
  let quick = spec.quickStart ?? 0;
  for (;;) {
    handBackIf(spec.handBack, cp);
    cp.attempt += 1;
    const probeStart = spec.monotonic();
    spec.watch?.consume(); // this probe answers every wake until now; one during it wakes the next pause at once
    // A probe may take seconds (curl's own limit is 10 s): the wait goes on heartbeating meanwhile.
    const ticker = setInterval(beat, WAIT_BEAT_MS);
    let answer: ProbeAnswer<T | undefined>;
    try {
      if (spec.guard) await guardOnce(spec.guard, ctx);
      answer = await probeOnce(spec, ctx, cp.memo);
    } finally {
      clearInterval(ticker);
    }
    cp.lastAnswer = answer.answer;
    if (answer.phase) cp.phase = answer.phase;
    if (answer.lastLine !== undefined) cp.lastLine = answer.lastLine;
    if (answer.memo !== undefined) cp.memo = answer.memo;
    if (answer.drain) cp.drain = answer.drain;
    // The log is followed only once a probe said "not yet": a server that already answers (a same-identity up, a
    // resumed wait) costs no follow channel. The follow reads the log's last lines first, so a startup line the
    // server printed during that first probe still wakes the wait.
    if (!answer.done) spec.watch?.ensure();
    cp.elapsedMs = elapsed();
    cp.elapsedS = Math.round(cp.elapsedMs / 1000);
    if (spec.step === 'readiness') moved();
    ctx.heartbeat(cp);
    if (answer.done) return spec.settle ? spec.settle(answer.value, cp, false) : (answer.value as T);
    if (cp.elapsedMs >= spec.timeoutS * 1000) {
      if (spec.settle) return spec.settle(answer.value, cp, true);
      throw ApplicationFailure.create({
        type: FAILURES.timeout.type,
        nonRetryable: true,
        message: `${NOT_REACHED[spec.step]} within ${spec.timeoutS} s${stuckAt(cp)} (${cp.attempt} probes; last answer: ${cp.lastAnswer})`,
        details: [{ ...cp }],
      });
    }
    // Probes START every intervalMs: a slow probe (ssh round trip, docker inspect) eats into the pause instead of
    // adding to it, which keeps the detection lag near one interval. The last pause ends at the deadline, so a wait
    // with a slow fallback probe still probes once at its end.
    const leftMs = spec.timeoutS * 1000 - cp.elapsedMs;
    const everyMs = quick > 0 ? QUICK_MS : spec.intervalMs;
    quick = Math.max(0, quick - 1);
    const pauseMs = Math.max(MIN_PAUSE_MS, Math.min(leftMs, everyMs - (spec.monotonic() - probeStart)));
    if (await pause(spec, ctx, pauseMs, beat, handedBack)) quick = QUICK_PROBES;
  }
}

/** What the server's log says (phase words, else the last line), for telling whether it moved. */
function serverKey(cp: WaitCheckpoint): string {
  return JSON.stringify([cp.phase?.words ?? null, cp.lastLine ?? null]);
}

/**
 * Where the server stuck, for a readiness timeout: `; the server stuck at loading weights 23/38, no change for 40 s`
 * (its phase, else its log's last line), or '' when its log said nothing pulse could read.
 */
export function stuckAt(cp: WaitProgress): string {
  const where = cp.phase?.words ?? (cp.lastLine ? `its log's last line: ${cp.lastLine.replace(/\s+/g, ' ').trim().slice(0, 160)}` : null);
  if (!where) return '';
  const still = typeof cp.movedAtS === 'number' ? cp.elapsedS - cp.movedAtS : null;
  return `; the server stuck at ${where}${still !== null && still > 0 ? `, no change for ${still} s` : ''}`;
}

/** The worker is shutting down: end this attempt now, its checkpoint heartbeated, so another worker resumes it. */
function handBackIf(signal: AbortSignal | undefined, cp: WaitCheckpoint): void {
  if (!signal?.aborted) return;
  Context.current().heartbeat(cp);
  throw ApplicationFailure.create({ type: HAND_BACK, message: `the worker is shutting down: the ${cp.step} wait goes on on another worker (after ${cp.attempt} probes)`, details: [{ ...cp }] });
}

/**
 * Sleep `ms` (ctx.sleep throws CancelledFailure on cancel) in steps of at most WAIT_BEAT_MS, heartbeating between
 * them; a watch's wake ends it early (true).
 */
async function pause<T>(spec: WaitSpec<T>, ctx: Context, ms: number, beat: () => void, handedBack: Promise<void> | null): Promise<boolean> {
  const end = spec.monotonic() + ms;
  for (;;) {
    const left = end - spec.monotonic();
    if (left <= 0) return false;
    const slept = spec.sleep ? spec.sleep(Math.min(left, WAIT_BEAT_MS)) : ctx.sleep(Math.min(left, WAIT_BEAT_MS));
    const wakes: Promise<boolean>[] = [slept.then(() => false)];
    if (spec.watch) wakes.push(spec.watch.woken().then(() => true));
    if (handedBack) wakes.push(handedBack.then(() => true));
    if (await Promise.race(wakes)) return true;
    if (end - spec.monotonic() > 0) beat();
  }
}

async function guardOnce(guard: (signal: AbortSignal) => Promise<void>, ctx: Context): Promise<void> {
  try {
    await guard(ctx.cancellationSignal);
  } catch (err) {
    const c = classify(err, 1);
    // A dropped link is a "not yet" here too: the next probe's guard tries again, and only a lost lock ends the wait.
    if (ctx.cancellationSignal.aborted || c.type === FAILURES.refused.type || !c.retry) throw toFailure(err, ctx.info.attempt, ctx.cancellationSignal.aborted);
  }
}

async function probeOnce<T>(spec: WaitSpec<T>, ctx: Context, memo: unknown): Promise<ProbeAnswer<T | undefined>> {
  try {
    return await spec.probe({ signal: ctx.cancellationSignal }, memo);
  } catch (err) {
    const c = classify(err, 1);
    if (ctx.cancellationSignal.aborted || !c.retry || c.type === FAILURES.script.type) throw toFailure(err, ctx.info.attempt, ctx.cancellationSignal.aborted);
    return { done: false, answer: c.message, value: undefined };
  }
}
