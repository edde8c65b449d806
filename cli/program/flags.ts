/**
 * What every command registration shares: the option validators commander calls while parsing, the readers that
 * take a parsed flag by its kind (so no flag is cast to a type it may not have), the global options, and the shape
 * of one registration (cli/program.ts lists them in help order).
 */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { PulseError } from '../../runtime/errors.js';
import type { GlobalOptions } from '../options.js';

export function positiveNumber(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive number, got "${v}"`);
    return n;
  };
}

/**
 * A time in seconds as every duration flag takes it (issue 30 item 12: one grammar everywhere): plain seconds (`90`,
 * `2.5`), or a number with a unit, `s`, `m` or `h`, alone or in a row from the largest (`45s`, `10m`, `1h30m`).
 * Null when `v` is none of these.
 */
export function parseDuration(v: string): number | null {
  const t = v.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$/.exec(t);
  if (!m || t === '') return null;
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

/** A commander validator of a duration flag (parseDuration) from `min` to `max` seconds; `whole`: no fractions. */
export function durationFlag(name: string, min: number, max: number, whole = false) {
  return (v: string): number => {
    const n = parseDuration(v);
    if (n === null || n < min || n > max || n <= 0 || (whole && !Number.isInteger(n))) {
      const range = `${whole ? 'whole seconds ' : ''}from ${min}s to ${max >= 86_400 ? `${max / 3600}h` : `${max}s`}`;
      throw new InvalidArgumentError(`${name} must be a time like 90, 45s, 10m or 1h30m, ${range}, got "${v}"`);
    }
    return n;
  };
}

/**
 * `--node`: given once (commander would keep only the last of two, silently), a comma list naming each node once.
 * Both are usage errors (exit 2), before any file is read (issue 30 item 12).
 */
export function nodeArg(v: string, previous: unknown): string {
  if (previous !== undefined) throw new InvalidArgumentError('--node is given twice; name several nodes once, comma-separated: --node a,b');
  const names = v.split(',');
  const dup = names.find((n, i) => n !== '' && names.indexOf(n) !== i);
  if (dup !== undefined) throw new InvalidArgumentError(`--node names ${dup} twice`);
  return v;
}

/** A UTC date or time as --since takes it: 2026-12-04, 2026-12-04T03:00, 2026-12-04T03:00:00Z, …+01:00. */
const SINCE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** `logs --since`: a duration back from now, as docker takes it (`<seconds>s`), or a UTC date or time as given. */
export function logsSince(v: string): string {
  if (SINCE_TIME.test(v.trim())) return v.trim();
  const n = parseDuration(v);
  if (n === null || n <= 0) throw new InvalidArgumentError(`--since must be a duration like 90, 45s, 10m or 1h30m, or a UTC time like 2026-12-04T03:00:00Z, got "${v}"`);
  return `${Math.ceil(n)}s`;
}

/** `history --since`: a duration back from now or a UTC date or time, as the ISO time it means (now: the caller's clock). */
export function historySince(v: string, _prev?: unknown, now: () => number = Date.now): string {
  const t = v.trim();
  if (SINCE_TIME.test(t) && !Number.isNaN(Date.parse(t))) return new Date(t).toISOString();
  const n = parseDuration(t);
  if (n === null || n <= 0) throw new InvalidArgumentError(`--since must be a duration like 45m, 2h or 1h30m, or a UTC time like 2026-12-04T03:00:00Z, got "${v}"`);
  return new Date(now() - n * 1000).toISOString();
}

/** `--tail N`: a whole number of lines (0 too), or `all`. */
export function tailLines(v: string): number | null {
  if (v === 'all') return null;
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`--tail must be a whole number of lines or "all", got "${v}"`);
  return Number(v);
}

/** Commander's parsed options: read each by its kind, so no flag is cast to a type it may not have. */
export type Flags = Record<string, unknown>;
export function str(o: Flags, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' ? v : undefined;
}
export function num(o: Flags, key: string): number | undefined {
  const v = o[key];
  return typeof v === 'number' ? v : undefined;
}
export const flag = (o: Flags, key: string): boolean => o[key] === true;
/**
 * A required option. Not commander's requiredOption: that check runs before the unknown-option check, so `--nod`
 * would get "required option" instead of commander's did-you-mean `--node`.
 */
export function required(o: Flags, key: string, cmd: Command): string {
  const v = str(o, key);
  if (v === undefined) {
    const names: string[] = [];
    for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
    throw new PulseError('usage', `--${key} is required`, { hint: `see: pulse ${names.join(' ')} --help` });
  }
  return v;
}

/** The root's options (--nodes, --temporal, --temporal-ui, with their environment fallbacks) and the output flags. */
export function globals(cmd: Command): GlobalOptions {
  const o: Flags = cmd.optsWithGlobals();
  return {
    nodes: str(o, 'nodes') ?? process.env['PULSE_NODES'],
    temporal: str(o, 'temporal') ?? process.env['TEMPORAL_ADDRESS'],
    temporalUi: str(o, 'temporalUi') ?? process.env['PULSE_TEMPORAL_UI'],
    verbose: flag(o, 'verbose'),
    json: flag(o, 'json'),
    quiet: flag(o, 'quiet'),
  };
}

/** A command module: run(opts) returns the exit code (errors are thrown as PulseError, main prints them). */
export interface CommandModule<T> {
  run(opts: T): Promise<number>;
}
/** Loads the command's module only when it runs (local-only commands never load the Temporal SDK or ssh2). */
export type RunLazy = <T>(load: () => Promise<CommandModule<T>>, opts: T) => Promise<void>;

/**
 * One command: adds itself (its options, its flags → options mapping, its lazy module) under `parent`. `root` is the
 * whole table (completion generates from it).
 */
export type Registration = (parent: Command, run: RunLazy, root: Command) => void;

/** --drain-s N: a whole number of seconds from 0 (no drain) to 3600 (the drain's ceiling, runtime/steps/catalog.ts). */
export function drainSeconds(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 3600) throw new InvalidArgumentError(`--drain-s must be a whole number of seconds from 0 to 3600, got "${v}"`);
  return n;
}

/** The drain budget the flags ask for: --no-drain is 0, --drain-s N is N; neither: undefined (nodes.json's drainBudgetS). */
export function drainOf(o: Flags): number | undefined {
  if (o['drain'] === false) return 0;
  return typeof o['drainS'] === 'number' ? o['drainS'] : undefined;
}

/** Adds --drain-s and --no-drain (up, down, rollback and their rollouts). */
export function addDrainFlags(cmd: Command): Command {
  return cmd
    .option('--drain-s <n>', 'before the stop, wait at most N s for the requests in flight to finish (default: nodes.json drainBudgetS, 300)', drainSeconds)
    .option('--no-drain', 'stop at once, without waiting for the requests in flight (--drain-s 0)');
}

