/**
 * Cold start of the local-only commands: `pulse model profiles` and `pulse model up best --node spark2 --dry-run`,
 * each a fresh `node bin/pulse-cli` process (median and worst of N runs), next to a bare `node -e ''` for the
 * runtime's own start. Goal: < 0.5 s.
 *
 * Run: npx tsc && node dist/bench/coldstart.js [runs]
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, median, printTable, round, runMain, writeResult } from './lib.js';

const RUNS = Number(process.argv[2] ?? 10);
const CLI = path.join(ROOT, 'bin/pulse-cli');
const FLEET = path.join(ROOT, 'test/fixtures/nodes/fleet.json');

function timeRun(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', PULSE_PROFILES_DIR: '' }, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

async function main(): Promise<void> {
  const cases: [string, string[]][] = [
    ['node -e "" (runtime start only)', ['-e', '']],
    ['pulse model profiles', [CLI, 'model', 'profiles', '--nodes', FLEET]],
    ['pulse model up best --dry-run', [CLI, 'model', 'up', 'best', '--node', 'spark2', '--dry-run', '--nodes', FLEET]],
  ];
  const rows = cases.map(([what, args]) => {
    timeRun(args); // warm the file cache once
    const ms = Array.from({ length: RUNS }, () => timeRun(args));
    return { command: what, medianS: median(ms) / 1000, worstS: Math.max(...ms) / 1000, goal: what.startsWith('pulse') ? '< 0.5 s' : '' };
  });
  printTable(`cold start: fresh process each, ${RUNS} runs`, rows);
  writeResult('coldstart', {
    runs: RUNS,
    rows: rows.map((r) => ({ ...r, medianS: round(r.medianS), worstS: round(r.worstS), met: r.goal === '' ? null : r.medianS < 0.5 })),
  });
}

runMain(main);
