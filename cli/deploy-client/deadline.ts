/**
 * `watch --timeout`: a follow that stops at a deadline and exits with the timeout code (8), as `kubectl rollout
 * status --timeout` does, so a script can wait for a deploy a bounded time. The deploy goes on: like Ctrl-C, the
 * deadline only ends the follow.
 */
import { FAILURES } from '../../runtime/failures.js';
import { duration } from '../../runtime/format.js';

export class FollowDeadline {
  private timer: NodeJS.Timeout | null = null;
  private reached = false;

  /** Aborts `ac` after `timeoutS` seconds (none when null). */
  constructor(ac: AbortController, private readonly timeoutS: number | null) {
    if (timeoutS === null) return;
    this.timer = setTimeout(() => {
      this.reached = true;
      ac.abort();
    }, timeoutS * 1000);
    this.timer.unref();
  }

  /** The exit code of the follow: the timeout's when the deadline ended it, else its own. */
  exit(code: number): number {
    return this.reached ? FAILURES.timeout.exit : code;
  }

  /** The line that says the deadline ended the follow (null when it did not). */
  line(): string | null {
    return this.reached ? `pulse: watch --timeout ${duration(this.timeoutS ?? 0)} reached; the deploy goes on (exit ${FAILURES.timeout.exit})` : null;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
