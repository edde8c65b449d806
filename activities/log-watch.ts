/**
 * What makes the readiness wait probe before its periodic probe is due: the server's own log, followed over the
 * node's open link (runtime/steps/follow.ts). uvicorn's `Application startup complete.` or the follow's end (docker
 * ends it when the container stops) wakes the wait, which probes /v1/models at once; the line is a trigger, never
 * the verdict (only the probe's 200 is). Each line is read once for the phase and dropped: the watch keeps the
 * latest phase and last line, nothing else of the log.
 *
 * A follow that ends or cannot run (the container not created or not running yet, a link drop, a log driver that
 * keeps nothing) is started again by itself after a backoff from RESTART_MIN_MS, doubling up to `restartMs` while
 * follows keep ending soon; meanwhile the wait has its periodic probe.
 */
import type { ServerPhase } from '../runtime/model/index.js';
import { isStartupComplete, readServerLog } from '../runtime/vllm/phase.js';

/** Starts one follow: lines to `onLine`; resolves true when the log ended (the container stopped). */
export type Follow = (onLine: (line: string) => void, signal: AbortSignal) => Promise<boolean>;

/** The first restart of a follow that ended soon after its start comes this soon (start.sh may still be creating it). */
const RESTART_MIN_MS = 100;

export class LogWatch {
  private running: AbortController | null = null;
  private started = false;
  private stopped = false;
  private backoffMs = RESTART_MIN_MS;
  private timer: NodeJS.Timeout | null = null;
  private pending = false;
  private next: Promise<void> | null = null;
  private resolveNext: () => void = () => undefined;
  private seen: { phase?: ServerPhase; lastLine?: string } = {};
  private lines = 0;
  /** Whether a follow runs and has delivered a line: the probes need not read the log's tail then. */
  get live(): boolean {
    return this.running !== null && this.lines > 0;
  }

  /** Follows started and wakes delivered (for the logs and the tests). */
  readonly counts = { follows: 0, wakes: 0 };

  constructor(private readonly follow: Follow, private readonly restartMs: number, private readonly monotonic: () => number, private readonly outer: AbortSignal) {}

  /** Start the first follow (later ones start by themselves after a follow ends). */
  ensure(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.start();
  }

  private start(): void {
    this.timer = null;
    if (this.stopped || this.outer.aborted) return;
    const ac = new AbortController();
    const onOuter = (): void => ac.abort(this.outer.reason);
    this.outer.addEventListener('abort', onOuter, { once: true });
    this.running = ac;
    const t0 = this.monotonic();
    this.counts.follows += 1;
    const done = (ended: boolean): void => {
      this.outer.removeEventListener('abort', onOuter);
      this.running = null;
      this.lines = 0;
      if (this.stopped || ac.signal.aborted) return;
      if (ended) this.poke();
      // A follow that ran a while was a real one: the next starts soon again; one that ended at once backs off.
      this.backoffMs = this.monotonic() - t0 >= this.restartMs ? RESTART_MIN_MS : Math.min(this.restartMs, this.backoffMs * 2);
      this.timer = setTimeout(() => this.start(), this.backoffMs);
    };
    this.follow((line) => this.line(line), ac.signal).then(done, () => done(false));
  }

  /**
   * Resolves when something says "probe now" (at once if it did since the last consume()). It does not consume the
   * wake: a pause that lost its race to its sleep leaves the promise behind, and a later poke must still count.
   */
  woken(): Promise<void> {
    if (this.pending) return Promise.resolve();
    this.next ??= new Promise((resolve) => (this.resolveNext = resolve));
    return this.next;
  }

  /** The wait is about to probe: the wakes so far are answered by it. */
  consume(): void {
    this.pending = false;
  }

  /** The phase and last line seen since the last call (empty when none). */
  take(): { phase?: ServerPhase; lastLine?: string } {
    const s = this.seen;
    this.seen = {};
    return s;
  }

  /** End the follow (the wait is over); never waits for it. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running?.abort();
    this.running = null;
  }

  private line(text: string): void {
    this.lines += 1;
    const r = readServerLog(text);
    if (r.phase) this.seen.phase = r.phase;
    if (r.lastLine !== null) this.seen.lastLine = r.lastLine;
    if (isStartupComplete(text)) this.poke();
  }

  private poke(): void {
    this.counts.wakes += 1;
    this.pending = true;
    this.next = null;
    this.resolveNext();
  }
}
