/**
 * Shared pieces of the benchmarks: timing, medians, the printed table and the JSON result in
 * bench/results/<name>.json. Figures are ratios measured in one run on one machine, so they compare like with like.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repo root, from dist/bench/lib.js. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Milliseconds taken by `fn`. */
export async function timeMs<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

export type Row = Record<string, string | number | boolean | null>;

/** Print rows as a fixed-width table. */
export function printTable(title: string, rows: Row[]): void {
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v: unknown): string => (typeof v === 'number' ? String(round(v)) : v === null || v === undefined ? '-' : String(v));
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]): string => vals.map((v, i) => v.padEnd(width[i] ?? 0)).join('  ');
  process.stdout.write(`\n${title}\n${line(cols)}\n${line(width.map((w) => '-'.repeat(w)))}\n`);
  for (const r of rows) process.stdout.write(`${line(cols.map((c) => cell(r[c])))}\n`);
}

/** Write bench/results/<name>.json with the machine it ran on. */
export function writeResult(name: string, result: Record<string, unknown>): string {
  const dir = path.join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? null, memGiB: round(os.totalmem() / 2 ** 30, 1), node: process.version, loadavg: os.loadavg().map((x) => round(x, 2)) };
  // bench/speed.sh stamps every result of one run with the same id, so a table can say its figures are from one run.
  const run = process.env['PULSE_BENCH_RUN'] ?? null;
  writeFileSync(file, `${JSON.stringify({ name, at: new Date().toISOString(), run, machine, ...result }, null, 2)}\n`);
  process.stdout.write(`\nwrote ${path.relative(ROOT, file)}\n`);
  return file;
}

/** Run a benchmark's main, exiting non-zero (with the message) on an error, and always exiting at the end. */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
