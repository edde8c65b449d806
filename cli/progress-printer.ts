/**
 * Renders a followed deploy: step lines, the wait-progress line, notes, and the final result with the backup path
 * and the rollback command on failure. On a terminal the wait line is one live line that fits the width
 * (cli/live-line.ts); off a terminal (a log, CI, a pipe) it is a plain line when its phase changes and at most one
 * heartbeat line a minute, with no control character. `quiet` keeps only the result and what went wrong.
 */
import type { DeployResult, NodeServes, ReadinessEstimate, WaitProgress } from '../runtime/model/index.js';
import { about, slowerThanUsual } from '../runtime/vllm/readiness-eta.js';
import { duration as durationOf } from '../runtime/format.js';
import { FAILURES } from '../runtime/failures.js';
import { drainWords } from '../runtime/steps/drain.js';
import { hasServerView, plainWaitLine, waitLine, type WaitLineInput } from './wait-line.js';
import type { FollowOutcome } from './follow-outcome.js';
import { colourOn, LiveLine, paint, plainText, type Out } from './live-line.js';

export type { Out } from './live-line.js';

/** How a step ended: ok, warned (it completed but cut requests: its mark is `!`), failed, cancelled. */
export type StepOutcome = 'ok' | 'warned' | 'failed' | 'cancelled';

/** Where --verbose prints the raw records: the node they come from, and the stream (stderr, as status does). */
export interface RawOut {
  node: string;
  out: Out;
}

export interface PrinterOptions {
  /** --quiet: no step, wait or progress lines; the result block, notes of trouble and errors stay. */
  quiet?: boolean;
  /** --verbose: also the lines of pulse's bookkeeping steps (plan check, node lock, state writes). */
  verbose?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** Off a terminal: at most one heartbeat line this often while the phase stays the same. */
export const PLAIN_HEARTBEAT_MS = 60_000;

/** A step's time in the one duration format (runtime/format.ts), with tenths below 10 s: `0.4s`, `3.2s`, `1m05s`. */
function secs(ms: number): string {
  return durationOf(ms / 1000, { tenths: true });
}

/**
 * One line for a heartbeat of a polling step: what is awaited, how long of how long, the last answer, and the
 * number of probes so far ("attempt" is kept for Temporal's retries of a step, as the Temporal UI uses it).
 */
export function formatWait(p: WaitProgress): string {
  // The drain before a stop: what the server still has in flight, against the drain budget (issue 29).
  if (p.step === 'drain') return `  … draining: ${p.drain ? drainWords(p.drain) : plainText(p.lastAnswer || '-')}, ${p.elapsedS}s of ${p.timeoutS}s`;
  return `  … ${p.step}: ${waitTail(p)}`;
}

/** A wait's time against its deadline, the last answer and the probe count. */
function waitTail(p: WaitProgress): string {
  const answer = plainText(p.lastAnswer || '-').replace(/\n/g, ' ');
  return `${durationOf(p.elapsedS)} of ${durationOf(p.timeoutS)}, last answer ${answer} (probe ${p.attempt})`;
}

export class ProgressPrinter {
  private readonly live: LiveLine | null;
  private readonly colour: boolean;
  private readonly quiet: boolean;
  private readonly verbose: boolean;
  /** Off a terminal: the phase of the last wait line printed, and when. */
  private plainPhase: string | null = null;
  private plainAt = 0;
  private retries = new Set<string>();
  /** The running step's line (`7/9 readiness on spark2`), the readiness estimate, and whether "slower" was said. */
  private running: string | null = null;
  private estimate: ReadinessEstimate | null = null;
  private slowSaid = false;
  /** Step lines inside a section (the auto-rollback's steps under the up's) are indented by this. */
  private indent = '';
  /** The messages of the ✗ lines printed so far: the closing line does not print the same cause again. */
  private readonly failures: string[] = [];
  /** What the live line shows now (redrawn under a note that comes while a step runs). */
  private liveText: string | ((width: number) => string) | null = null;

  /** `raw`: print each finished step's raw records there (--verbose); null prints none. */
  constructor(
    private readonly out: Out,
    private readonly now: () => number = Date.now,
    private readonly raw: RawOut | null = null,
    opts: PrinterOptions = {},
  ) {
    this.live = out.isTTY ? new LiveLine(out) : null;
    this.colour = colourOn(out, opts.env);
    this.quiet = opts.quiet === true;
    this.verbose = opts.verbose === true || raw !== null;
  }

  /** Writes a line as given (its own colour), after clearing the live line. */
  private emit(text: string): void {
    this.live?.clear();
    this.out.write(`${text}\n`);
    // A note in the middle of a step: the step's live line comes back under it.
    if (this.live && this.running !== null && this.liveText !== null) this.live.show(this.liveText);
  }

  /** The live line (a terminal only): the running step, or its wait. */
  private showLive(text: string | ((width: number) => string)): void {
    this.liveText = text;
    this.live?.show(text);
  }

  /** Writes a line of text that may come from elsewhere: control characters dropped. */
  private write(text: string): void {
    this.emit(text.split('\n').map(plainText).join('\n'));
  }

  /** A plain line (clears the live line first); control characters in it are dropped. */
  line(text: string): void {
    this.write(text);
  }

  /** A line of progress (step lines, the header): none with --quiet. */
  progress(text: string): void {
    if (!this.quiet) this.write(text);
  }

  /** The run's header (a line of progress): what runs, its workflow and run, and its UI page or the hint how to get one. */
  header(what: string, workflowId: string, runId: string, link: string | null): void {
    this.progress(`${what}: workflow ${workflowId} (run ${runId})${link ? `\n  ${link}` : ''}`);
  }

  note(text: string): void {
    this.emit(`  ${paint(this.colour, 'warn', '!')} ${plainText(text)}`);
  }

  /**
   * A step began. On a terminal its `→` line is the live line, which its `✓` replaces in place (one line per step);
   * off a terminal (a log) the `→` line stays, so the log says when each step began. A bookkeeping step shows
   * nothing unless --verbose (or it fails).
   */
  stepStarted(name: string, bookkeeping = false): void {
    if (this.quiet || (bookkeeping && !this.verbose)) return;
    this.plainPhase = null; // a new step: its first wait line is a phase change
    this.running = plainText(name);
    if (this.live) this.showLive(`${this.indent}→ ${this.running}`);
    else this.write(`${this.indent}→ ${name}`);
  }

  /** A step ended: ✓ ok, `!` completed but cut requests (`warned`, in the warning colour), ✗ failed or cancelled. */
  stepEnded(name: string, outcome: StepOutcome, ms: number, message: string | null, bookkeeping = false): void {
    if (this.quiet && outcome === 'ok') return;
    if (bookkeeping && !this.verbose && outcome === 'ok') return;
    if (this.running === plainText(name)) this.running = null;
    const done = outcome === 'ok' || outcome === 'warned';
    const mark = outcome === 'ok' ? paint(this.colour, 'ok', '✓') : outcome === 'warned' ? paint(this.colour, 'warn', '!') : paint(this.colour, 'bad', '✗');
    const word = done ? '' : `: ${paint(this.colour, 'bad', outcome)}`;
    const tail = done ? (message ? `: ${plainText(message)}` : '') : `${word}${message ? `: ${plainText(message)}` : ''}`;
    if (!done && message) this.failures.push(plainText(message));
    this.emit(`${this.indent}${mark} ${plainText(name)} (${secs(ms)})${tail}`);
  }

  /**
   * A section of its own under the deploy (the auto-rollback, a child workflow): its title line, then its steps and
   * its live line indented until `endSection`.
   */
  section(title: string): void {
    this.running = null;
    this.emit(plainText(title));
    this.indent = '  ';
  }

  endSection(text: string | null): void {
    this.running = null;
    this.indent = '';
    if (text !== null) this.emit(text);
  }

  /** Whether a ✗ line already printed this cause (`<step>: <message>` or the message itself). */
  private shown(cause: string): boolean {
    const c = plainText(cause);
    return this.failures.some((m) => c === m || c.endsWith(`: ${m}`));
  }

  /** --verbose: a finished step's raw records, right under its end line, as `status --verbose` prints them, indented. */
  rawRecords(lines: readonly string[]): void {
    if (!this.raw || lines.length === 0) return;
    this.live?.clear();
    for (const l of lines) this.raw.out.write(`  ${this.raw.node}: ${plainText(l)}\n`);
  }

  /** How long readiness usually takes here (the 'starting' state step's answer): the wait line measures against it. */
  readinessEstimate(e: ReadinessEstimate): void {
    this.estimate = e;
  }

  waitProgress(p: WaitProgress): void {
    if (this.quiet) return;
    // The estimate: the 'starting' step's answer, else the one the wait heartbeats (a follow that began mid-wait).
    if (!this.estimate && p.estimate) this.estimate = p.estimate;
    if (hasServerView(p, this.estimate)) {
      this.serverWait(p);
      return;
    }
    if (this.live) {
      // One line per step: the running step's line, with its wait.
      this.showLive(this.running ? `${this.indent}→ ${this.running}  ${waitTail(p)}` : `${this.indent}${formatWait(p)}`);
      return;
    }
    const text = formatWait(p);
    const phase = p.step;
    if (phase === this.plainPhase && this.now() - this.plainAt < PLAIN_HEARTBEAT_MS) return;
    this.plainPhase = phase;
    this.plainAt = this.now();
    this.write(`${this.indent}${text}`);
  }

  /** The readiness wait with the server's phase and the estimate (cli/wait-line.ts); off a terminal once per phase. */
  private serverWait(p: WaitProgress): void {
    const input: WaitLineInput = { name: `${this.indent}${this.running ?? p.step}`, wait: p, estimate: this.estimate };
    if (!this.slowSaid && slowerThanUsual(this.estimate, p.elapsedS) && this.estimate?.estimateS) {
      this.slowSaid = true;
      const words = `${input.name}: ${durationOf(p.elapsedS)} so far, longer than usual here (${about(this.estimate.estimateS)} from ${this.estimate.samples} earlier start${this.estimate.samples === 1 ? '' : 's'})`;
      this.emit(`  ${paint(this.colour, 'warn', `! ${plainText(words)}`)}`);
    }
    if (this.live) {
      this.showLive((width) => waitLine(input, width));
      return;
    }
    const phase = `${p.step}:${p.phase?.id ?? (p.lastLine ? 'log' : '')}`;
    if (phase === this.plainPhase && this.now() - this.plainAt < PLAIN_HEARTBEAT_MS) return;
    this.plainPhase = phase;
    this.plainAt = this.now();
    this.write(`${this.indent}${plainWaitLine(input)}`);
  }

  /** Said once per attempt: a step failed and Temporal retries it (attempt N is Temporal's count). */
  retrying(name: string, attempt: number, message: string): void {
    const key = `${name}#${attempt}`;
    if (this.retries.has(key)) return;
    this.retries.add(key);
    this.note(`${name}: attempt ${attempt} after: ${message}`);
  }

  /**
   * The closing block: result, notes, warnings; on a failure the warnings, `wayOut` (cli/failure-block.ts: the
   * container, the logs), the backup and the rollback command first, and the verdict with its cause last.
   */
  outcome(o: FollowOutcome, what: string, wayOut: readonly string[] = [], liveEnv: string | null = null): void {
    this.running = null;
    this.live?.clear();
    if (o.kind === 'detached') return;
    const r = o.result;
    if (r) this.result(r, what, wayOut, liveEnv);
    else {
      this.emit(`${what}: ${paint(this.colour, o.status === 'completed' ? 'ok' : 'bad', o.status)}${o.error ? `: ${plainText(o.error)}` : ''}`);
      for (const l of wayOut) this.write(`  ${l}`);
    }
    if (r && !r.ok && o.error && r.error !== o.error) this.write(`  cause: ${o.error}`);
  }

  /** The follow ended: stop redrawing on resize. */
  close(): void {
    this.running = null;
    this.live?.clear();
    this.live?.close();
  }

  private result(r: DeployResult, what: string, wayOut: readonly string[], liveEnv: string | null): void {
    const mode = r.mode === 'same-identity' ? ' (same .env already running: steps 1, 7, 8, 9)' : '';
    if (r.ok) this.emit(`${what}: ${paint(this.colour, 'ok', 'ok')}, node ${r.state}${mode}`);
    for (const w of r.warnings) this.emit(`  ${paint(this.colour, 'warn', 'warning')}: ${plainText(w)}`);
    for (const n of r.clientNotes) this.write(`  pulse-client: ${n}`);
    if (r.ok && r.serves) for (const l of servesLines(r.serves, r.node)) this.write(`  ${l}`);
    if (r.halted) this.write(`  the server this up had started was stopped: it does not go on to serve ${r.profile ?? 'the abandoned profile'}`);
    if (r.ok) return;
    // The way out before the verdict: the block (container, log lines that wrap at 80 columns) is long, and on a
    // 24-row screen a verdict above it scrolled away with the ✗ line that holds the cause.
    for (const l of wayOut) this.write(`  ${l}`);
    if (r.backupPath) this.write(`  backup of the previous .env: ${r.backupPath}`);
    const back = goBackCommand(r, liveEnv);
    if (back && !r.rollback?.ok) this.write(`  to go back: ${back}`);
    const cause = causeOf(r);
    // The ✗ line said the cause far up the screen: said again right above the verdict, which points to it.
    if (this.shown(cause)) this.write(`cause: ${plainText(cause)}`);
    this.emit(this.failedHead(r, what));
  }

  /**
   * The FAILED line: the cause once (a ✗ line above already said it: then only where), and what the auto-rollback
   * did. The cause is the deploy's first error; the rollback's own failure is its section's ✗ line.
   */
  private failedHead(r: DeployResult, what: string): string {
    const cause = causeOf(r);
    const step = r.steps.find((s) => !s.ok)?.step ?? null;
    const above = this.shown(cause);
    const bad = paint(this.colour, 'bad', r.errorType === FAILURES.cancelled.type ? 'CANCELLED' : 'FAILED');
    const head = above ? `${what}: ${bad}${step ? ` at ${step}` : ''} (cause above), node ${r.state}` : `${what}: ${bad}, node ${r.state}: ${plainText(cause)}`;
    if (!r.rollback) return head;
    if (r.rollback.ok) {
      const after = r.rollback.servingAfterS === null ? '' : `, serving again ${r.rollback.servingAfterS} s after the stop`;
      return `${head}; auto-rollback: ${r.rollback.profile ?? 'the previous .env'} is back${after}`;
    }
    const why = r.rollback.error && !this.shown(r.rollback.error) ? `: ${plainText(r.rollback.error)}` : ' (see its section)';
    return `${head}; the auto-rollback failed too${why}`;
  }
}

/** host:port of an endpoint URL (http://10.0.0.2:8000/v1), or the URL itself when it does not parse. */
function hostPort(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/**
 * What the node now serves and whether the gateway sends it traffic, from the publish step's record
 * (DeployResult.serves): `serving: best as qwen38 (max_model_len 32768) on 10.0.0.2:8000`, then
 * `gateway endpoint: enabled` or `disabled: <the gateway backend file's reason>`. The address is one that answers: a
 * server on a loopback BIND listens only on its node (`at 127.0.0.1:8000 on spark2`), whatever host the gateway URL
 * names.
 */
export function servesLines(s: NodeServes, node: string): string[] {
  const l = s.listen;
  const where = l?.loopback ? ` at ${l.bind}:${l.port} on ${node}` : s.endpoint ? ` on ${hostPort(s.endpoint.url)}` : '';
  const len = s.maxModelLen === null ? '' : ` (max_model_len ${s.maxModelLen})`;
  const what = s.state === 'up'
    ? `serving: ${s.profile ?? 'an unknown profile'}${s.servedModelName ? ` as ${s.servedModelName}` : ''}${len}${where}`
    : `serving: nothing (node ${s.state})${where}`;
  if (!s.endpoint) return [what, 'gateway endpoint: the gateway backend file does not name this node'];
  const e = s.endpoint;
  const state = e.enabled ? `enabled${e.reason ? ` (${plainText(e.reason)})` : ''}` : `disabled: ${plainText(e.reason ?? 'no reason recorded')}`;
  return [what, `gateway endpoint: ${state}`];
}

/** The deploy's first error, without what the auto-rollback appended (workflows/auto-rollback.ts). */
export function causeOf(r: DeployResult): string {
  const e = r.error ?? 'deploy failed';
  if (!r.rollback) return e;
  const cut = [e.lastIndexOf('; rolled back to '), e.lastIndexOf('; rollback failed too: ')].filter((i) => i >= 0);
  return cut.length > 0 ? e.slice(0, Math.min(...cut)) : e;
}

/**
 * What really goes back after a failed up: `pulse model rollback --to <file>` restores a .env's exact bytes and starts
 * them: the backup the up's write step made, or, when it wrote none (it failed before the write, or the .env was the
 * same), the live .env (`liveEnv`, read from the node), which is still the one that ran before. Never `up <profile>`:
 * that renders anew, and named the very profile being deployed when the node already ran it. Without either file,
 * the workflow's command.
 */
export function goBackCommand(r: DeployResult, liveEnv: string | null = null): string | null {
  if (r.action !== 'up' || r.ok || r.rollbackCommand === null) return r.rollbackCommand;
  const yes = r.rollbackCommand.endsWith(' --yes') ? ' --yes' : '';
  const file = r.backupPath ?? liveEnv;
  return file ? `pulse model rollback --node ${r.node} --to ${file}${yes}` : r.rollbackCommand;
}
