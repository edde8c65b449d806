/**
 * Parses `@pulse {json}` lines out of a script's stdout. Node output is untrusted: the parser never throws, keeps
 * partial lines across chunks, and ignores anything that is not a well-formed record object with a string kind.
 */
import type { PulseRecord } from './types.js';

const PREFIX = '@pulse ';
/** A runaway line without a newline is cut here, so a garbage stream cannot grow memory without bound. */
const MAX_LINE = 1 << 20;

/** One line → a record, or null when it is not a record. Never throws. */
export function parseRecordLine(line: string): PulseRecord | null {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (!text.startsWith(PREFIX)) return null;
  try {
    const value: unknown = JSON.parse(text.slice(PREFIX.length));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
    const kind = (value as { kind?: unknown }).kind;
    if (typeof kind !== 'string' || kind === '') return null;
    return value as PulseRecord;
  } catch {
    return null;
  }
}

/** Incremental splitter: feed stdout chunks, get records (and their raw lines) as whole lines complete. */
export class RecordParser {
  private partial = '';
  private readonly decoder = new TextDecoder('utf-8');

  constructor(private readonly emit: (record: PulseRecord, raw: string) => void) {}

  /** Feed one chunk (Buffer or string). */
  push(chunk: Buffer | Uint8Array | string): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    if (this.partial.length > MAX_LINE) this.partial = '';
    for (const line of lines) this.line(line);
  }

  /** Flush the last line when the stream ends without a newline. */
  end(): void {
    const rest = this.partial + this.decoder.decode();
    this.partial = '';
    if (rest !== '') this.line(rest);
  }

  private line(line: string): void {
    const record = parseRecordLine(line);
    if (record) this.emit(record, line.endsWith('\r') ? line.slice(0, -1) : line);
  }
}

/** All records of a complete output (tests and one-shot callers). */
export function parseRecords(output: string): PulseRecord[] {
  const out: PulseRecord[] = [];
  const p = new RecordParser((r) => out.push(r));
  p.push(output);
  p.end();
  return out;
}

/** Keeps the last `max` bytes of a stream (stderr tail) as text. */
export class Tail {
  private buf = '';
  constructor(private readonly max = 4096) {}
  /** Append a chunk. */
  push(chunk: Buffer | string): void {
    this.buf += chunk.toString();
    if (this.buf.length > this.max * 2) this.buf = this.buf.slice(-this.max);
  }
  /** The tail, at most `max` characters. */
  text(): string {
    return this.buf.slice(-this.max);
  }
}
