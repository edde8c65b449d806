/**
 * What makes the readiness wait probe before its periodic probe is due: the server's own log, followed over the
 * node's open link (runtime/steps/follow.ts). uvicorn's `Application startup complete.` or the follow's end (docker
 * ends it when the container stops) wakes the wait, which probes /v1/models at once; the line is a trigger, never
 * the verdict (only the probe's 200 is). Each line is read once for the phase and dropped: the watch keeps the
 * latest phase and last line, nothing else of the log.
 *
 * A follow that ends is started again no sooner than `restartMs` after its last start (a container that is not
 * running ends every follow at once), and one that cannot run (a link drop, a log driver that keeps nothing) only
 * leaves the wait on its periodic probe.
 */
import type { ServerPhase } from '../runtime/model/index.js';
import { isStartupComplete, readServerLog } from '../runtime/vllm-phase.js';

/** Starts one follow: lines to `onLine`; resolves true when the log ended (the container stopped). */
export type Follow = (onLine: (line: string) => void, signal: AbortSignal) => Promise<boolean>;

export class LogWatch {
  private running: AbortController | null = null;
  private lastStart = -Infinity;
  private pending = false;
  private wake: (() => void) | null = null;
  private seen: { phase?: ServerPhase; lastLine?: string } = {};
  /** Follows started and wakes delivered (for the logs and the tests). */
  readonly counts = { follows: 0, wakes: 0 };

  constructor(private readonly follow: Follow, private readonly restartMs: number, private readonly monotonic: () => number, private readonly outer: AbortSignal) {}

  /** Start a follow when none runs and the last one started at least restartMs ago. */
  ensure(): void {
    if (this.running || this.outer.aborted || this.monotonic() - this.lastStart < this.restartMs) return;
    const ac = new AbortController();
    const onOuter = (): void => ac.abort(this.outer.reason);
    this.outer.addEventListener('abort', onOuter, { once: true });
    this.running = ac;
    this.lastStart = this.monotonic();
    this.counts.follows += 1;
    const done = (ended: boolean): void => {
      this.outer.removeEventListener('abort', onOuter);
      if (this.running === ac) this.running = null;
      if (ended && !ac.signal.aborted) this.poke();
    };
    this.follow((line) => this.line(line), ac.signal).then(done, () => done(false));
  }

  /** Resolves when something says "probe now" (at once if it already did since the last wake). */
  woken(): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.wake = () => {
        this.pending = false;
        this.wake = null;
        resolve();
      };
    });
  }

  /** The phase and last line seen since the last call (empty when none). */
  take(): { phase?: ServerPhase; lastLine?: string } {
    const s = this.seen;
    this.seen = {};
    return s;
  }

  /** End the follow (the wait is over); never waits for it. */
  stop(): void {
    this.running?.abort();
    this.running = null;
    this.lastStart = Infinity;
  }

  private line(text: string): void {
    const r = readServerLog(text);
    if (r.phase) this.seen.phase = r.phase;
    if (r.lastLine !== null) this.seen.lastLine = r.lastLine;
    if (isStartupComplete(text)) this.poke();
  }

  private poke(): void {
    this.counts.wakes += 1;
    this.pending = true;
    this.wake?.();
  }
}
