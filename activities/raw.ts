/**
 * The raw `@pulse` lines a step returns with its result (StepRaw), for `--verbose`. They go into workflow history,
 * so they are capped: a chatty or broken script must not bloat every deploy's history (Temporal limits a payload
 * to a few MiB and the CLI re-reads the whole history on every poll). The LAST lines are kept: the final records
 * (the result, an error) are the ones worth reading.
 */
import type { NodeSession } from '../runtime/node/types.js';
import type { StepRaw } from '../runtime/model/index.js';

export const RAW_MAX_LINES = 200;
export const RAW_MAX_BYTES = 16 * 1024;

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** One line cut to the byte budget (a single huge record must not push every other line out). */
function clip(line: string, max: number): string {
  if (bytes(line) <= max) return line;
  const tail = ` … (line cut at ${max} bytes)`;
  // A cut inside a multi-byte character decodes to U+FFFD: drop it.
  const head = Buffer.from(line, 'utf8').subarray(0, max - bytes(tail)).toString('utf8').replace(/\uFFFD$/, '');
  return head + tail;
}

/** Bytes kept free for the marker line when lines are left out. */
const MARKER_ROOM = 128;

/** The last lines of `lines` that fit both limits. */
function lastWithin(lines: readonly string[], maxLines: number, maxBytes: number): string[] {
  const kept: string[] = [];
  let used = 0;
  for (let i = lines.length - 1; i >= 0 && kept.length < maxLines; i--) {
    const line = lines[i] ?? '';
    if (used + bytes(line) > maxBytes) break;
    kept.unshift(line);
    used += bytes(line);
  }
  return kept;
}

/** The last lines within `maxLines` and `maxBytes`; when some are left out, a first line says how many. */
export function capRaw(lines: readonly string[], maxLines = RAW_MAX_LINES, maxBytes = RAW_MAX_BYTES): string[] {
  const clipped = lines.map((l) => clip(l, maxBytes - MARKER_ROOM));
  if (clipped.length <= maxLines && clipped.reduce((n, l) => n + bytes(l), 0) <= maxBytes) return clipped;
  const kept = lastWithin(clipped, maxLines - 1, maxBytes - MARKER_ROOM);
  const cut = lines.length - kept.length;
  return [`… ${cut} earlier record line(s) left out (a step keeps its last ${maxLines} lines, ${maxBytes} bytes)`, ...kept];
}

/**
 * A session that remembers the raw record lines of every script run through it, so an activity can return them
 * without the step functions (runtime/steps) knowing about --verbose.
 */
export class RawRecorder {
  private readonly lines: string[] = [];
  readonly session: NodeSession;

  constructor(inner: NodeSession) {
    const lines = this.lines;
    this.session = {
      get target() {
        return inner.target;
      },
      async run(step, opts) {
        const result = await inner.run(step, opts);
        lines.push(...result.rawRecords);
        return result;
      },
      close: () => inner.close(),
      ...(inner.link ? { link: () => (inner.link as () => Promise<number>)() } : {}),
    };
  }

  /**
   * `result` with the capped lines as `raw`; unchanged when no script ran (e.g. mkdir with nothing to create) or when
   * `keep` is false (a deploy started without --verbose keeps no raw records in its history).
   */
  attach<T extends object>(result: T, keep = true): T & StepRaw {
    return this.lines.length === 0 || !keep ? result : { ...result, raw: capRaw(this.lines) };
  }
}
