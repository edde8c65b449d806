/**
 * Renders a followed deploy: step lines, the wait-progress line (rewritten in place on a TTY, a line every ~30 s
 * otherwise), notes, and the final result with the backup path and the rollback command on failure.
 */
import type { DeployResult, WaitProgress } from '../runtime/model/index.js';
import type { FollowOutcome } from './follow-outcome.js';

interface Out {
  write(s: string): unknown;
  isTTY?: boolean;
}

/** Where --verbose prints the raw records: the node they come from, and the stream (stderr, as status does). */
export interface RawOut {
  node: string;
  out: Out;
}

const PLAIN_INTERVAL_MS = 30_000;

function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** One line for a heartbeat of a polling step. */
export function formatWait(p: WaitProgress): string {
  return `  … ${p.step}: attempt ${p.attempt}, last answer: ${p.lastAnswer || '-'}, ${Math.round(p.elapsedS)} s of ${Math.round(p.timeoutS)} s`;
}

export class ProgressPrinter {
  private liveLine = false;
  private lastPlainWait = new Map<string, number>();
  private retries = new Set<string>();

  /** `raw`: print each finished step's raw records there (--verbose); null prints none. */
  constructor(
    private readonly out: Out,
    private readonly now: () => number = Date.now,
    private readonly raw: RawOut | null = null,
  ) {}

  private clearLive(): void {
    if (this.liveLine) this.out.write('\r\x1b[2K');
    this.liveLine = false;
  }

  /** A plain line (clears a live progress line first). */
  line(text: string): void {
    this.clearLive();
    this.out.write(`${text}\n`);
  }

  note(text: string): void {
    this.line(`  ! ${text}`);
  }

  stepStarted(name: string): void {
    this.line(`→ ${name}`);
  }

  stepEnded(name: string, outcome: 'ok' | 'failed' | 'cancelled', ms: number, message: string | null): void {
    const mark = outcome === 'ok' ? '✓' : '✗';
    const tail = outcome === 'ok' ? (message ? `: ${message}` : '') : `: ${outcome}${message ? `: ${message}` : ''}`;
    this.line(`${mark} ${name} (${secs(ms)})${tail}`);
  }

  /** --verbose: a finished step's raw records, right under its end line, as `status --verbose` prints them, indented. */
  rawRecords(lines: readonly string[]): void {
    if (!this.raw || lines.length === 0) return;
    this.clearLive();
    for (const l of lines) this.raw.out.write(`  ${this.raw.node}: ${l}\n`);
  }

  waitProgress(p: WaitProgress): void {
    const text = formatWait(p);
    if (this.out.isTTY) {
      this.out.write(`\r\x1b[2K${text}`);
      this.liveLine = true;
      return;
    }
    const last = this.lastPlainWait.get(p.step);
    if (last !== undefined && this.now() - last < PLAIN_INTERVAL_MS) return;
    this.lastPlainWait.set(p.step, this.now());
    this.line(text);
  }

  /** Said once per attempt: a step failed and Temporal retries it. */
  retrying(name: string, attempt: number, message: string): void {
    const key = `${name}#${attempt}`;
    if (this.retries.has(key)) return;
    this.retries.add(key);
    this.note(`${name}: attempt ${attempt} after: ${message}`);
  }

  /** The closing block: result, notes, warnings, backup and rollback. */
  outcome(o: FollowOutcome, what: string): void {
    this.clearLive();
    if (o.kind === 'detached') return;
    const r = o.result;
    if (r) this.result(r, what);
    else this.line(`${what}: ${o.status}${o.error ? `: ${o.error}` : ''}`);
    if (r && !r.ok && o.error && r.error !== o.error) this.line(`  cause: ${o.error}`);
  }

  private result(r: DeployResult, what: string): void {
    const mode = r.mode === 'same-identity' ? ' (same .env already running: steps 1, 7, 8, 9)' : '';
    this.line(r.ok ? `${what}: ok, node ${r.state}${mode}` : `${what}: FAILED, node ${r.state}${r.error ? `: ${r.error}` : ''}`);
    for (const w of r.warnings) this.line(`  warning: ${w}`);
    for (const n of r.clientNotes) this.line(`  pulse-client: ${n}`);
    if (!r.ok && r.backupPath) this.line(`  backup of the previous .env: ${r.backupPath}`);
    if (!r.ok && r.rollbackCommand) this.line(`  to go back: ${r.rollbackCommand}`);
  }
}
