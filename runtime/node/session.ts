/**
 * A NodeSession over any transport: sends prelude + inputs + step body to `bash -s`, parses records, and on abort
 * kills the step's process group on the node (from the prelude's `pgid` record) before closing the channel.
 */
import { PulseError } from '../errors.js';
import { RecordParser, Tail } from './records.js';
import { scriptText } from './script.js';
import type { Channel, Transport } from './transport.js';
import type { NodeSession, NodeTarget, PulseRecord, RemoteResult, RunOptions, StepName } from './types.js';

/** How long an abort waits for the prelude's pgid record before it can only close the channel. */
const PGID_WAIT_MS = 5000;
/** After the kill, how long to wait for the channel to report its end before giving up on it. */
const CLOSE_WAIT_MS = 5000;

function delay<T>(ms: number, value: T): Promise<T> {
  return new Promise((res) => setTimeout(() => res(value), ms).unref());
}

/** Attach the record parser and the stderr tail to a channel. */
function collect(ch: Channel, opts: RunOptions): { records: PulseRecord[]; raw: string[]; tail: Tail; pgid: Promise<number | null> } {
  const records: PulseRecord[] = [];
  const raw: string[] = [];
  const tail = new Tail();
  let gotPgid: (n: number | null) => void = () => undefined;
  // The prelude's first record; an abort that comes before it waits for it (or for the end of the run).
  const pgid = new Promise<number | null>((res) => (gotPgid = res));
  void ch.done.then(() => gotPgid(null), () => gotPgid(null)); // both arms: a dropped link must not be unhandled
  const parser = new RecordParser((r, line) => {
    if (r.kind === 'pgid' && typeof r.pgid === 'number') gotPgid(r.pgid);
    if (opts.keep?.(r) ?? true) {
      records.push(r);
      raw.push(line);
    }
    try {
      opts.onRecord?.(r);
    } catch {
      /* a listener's bug must not break the run */
    }
  });
  ch.stdout.on('data', (c: Buffer) => parser.push(c));
  ch.stdout.on('end', () => parser.end());
  ch.stderr.on('data', (c: Buffer) => tail.push(c));
  return { records, raw, tail, pgid };
}

/** The error an aborted run rejects with: the signal's own reason when it is an Error. */
function abortError(target: NodeTarget, step: StepName, signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new PulseError('script', `${target.name}: step ${step} was cancelled`);
}

/** A session bound to one transport (one ssh connection, or the local host). */
export class TransportSession implements NodeSession {
  constructor(private readonly transport: Transport) {}

  get target(): NodeTarget {
    return this.transport.target;
  }

  get alive(): boolean {
    return this.transport.alive;
  }

  /** Why the link may not serve `target` as the files give it now, or null (Transport.drift). */
  drift(target: NodeTarget): Promise<string | null> {
    return this.transport.drift(target);
  }

  /**
   * Run one step script; resolves with its typed result (any exit code), rejects on transport failure or abort. A
   * shell started ahead (runtime/node/warm.ts) that died before the script began (no record at all: the prelude's
   * first line is its pgid record, before it changes anything) gets the script again once, in a new shell: it can
   * die after the pool looked at it and before its close arrives.
   */
  async run(step: StepName, opts: RunOptions = {}): Promise<RemoteResult> {
    const first = await this.runOnce(step, opts);
    if (first !== null) return first;
    const again = await this.runOnce(step, opts, false);
    if (again === null) throw new PulseError('unreachable', `${this.target.name}: step ${step}: the shell ended before the script began, twice`);
    return again;
  }

  /** One run in one shell; null when that shell was started ahead and died before the script began (and `retry`). */
  private async runOnce(step: StepName, opts: RunOptions, retry = true): Promise<RemoteResult | null> {
    const text = scriptText(step, opts.env ?? {});
    if (opts.signal?.aborted) throw abortError(this.target, step, opts.signal);
    const started = Date.now();
    const ch = await this.transport.exec();
    if (opts.signal?.aborted) {
      ch.kill(); // aborted while the channel was opening: nothing was sent, nothing runs
      throw abortError(this.target, step, opts.signal);
    }
    const out = collect(ch, opts);
    let aborted = false;
    let finished = false; // after the end, a pgid may be reused by someone else: never kill it then
    void ch.done.then(() => (finished = true), () => (finished = true));
    let abortFinished: () => void = () => undefined;
    // Resolves once an abort has killed the group and closed the channel (or given up waiting for the close).
    const abortDone = new Promise<null>((res) => (abortFinished = () => res(null)));
    const onAbort = (): void => {
      aborted = true;
      void (async () => {
        const pg = await Promise.race([out.pgid, delay(PGID_WAIT_MS, null)]);
        if (!finished) await this.killGroup(pg);
        ch.kill();
        await Promise.race([ch.done.catch(() => undefined), delay(CLOSE_WAIT_MS, undefined)]);
        abortFinished();
      })();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    ch.stdin.end(text);
    const diedBeforeStart = async (): Promise<boolean> => retry && !aborted && ch.startedAhead === true && (await out.pgid) === null;
    try {
      let ended: Awaited<typeof ch.done> | null;
      try {
        ended = await Promise.race([ch.done.then((v) => v, (e: unknown) => (aborted ? abortDone : Promise.reject(e))), abortDone]);
      } catch (e) {
        if (await diedBeforeStart()) return null;
        throw e;
      }
      if (aborted || ended === null) {
        await abortDone;
        throw abortError(this.target, step, opts.signal as AbortSignal);
      }
      if (await diedBeforeStart()) return null;
      const { code, signal } = ended;
      return {
        node: this.target.name, step, exitCode: code, signal, records: out.records,
        stderrTail: out.tail.text(), rawRecords: out.raw, durationMs: Date.now() - started,
      };
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Kill a step's process group on the node, over the same link. Best effort: the channel closes anyway. */
  private async killGroup(pgid: number | null): Promise<void> {
    if (pgid === null || !this.transport.alive) return;
    try {
      const ch = await this.transport.exec();
      ch.stdout.resume();
      ch.stderr.resume();
      ch.stdin.end(scriptText('kill-group', { PULSE_KILL_PGID: String(pgid) }));
      await ch.done;
    } catch {
      /* the link is gone; nothing more can be done from here */
    }
  }

  /** Close the underlying link. */
  close(): Promise<void> {
    return this.transport.close();
  }
}
