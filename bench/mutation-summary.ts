/**
 * The tables of bench/mutation.md from the StrykerJS reports bench/mutation.sh wrote (bench/results/mutation-*.json,
 * mutation-testing-report-schema): the score per module and every mutant the unit tier let live, with its line and
 * the code Stryker put there. `node dist/bench/mutation-summary.js [--survivors]`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface Mutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number; column: number } };
}
interface Report {
  files: Record<string, { source: string; mutants: Mutant[] }>;
  pulse?: { wallS: number; load: string; at: string };
}

const RESULTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/results');

/** Killed and timed-out mutants count as detected (a mutant that hangs the suite is caught); type errors are not mutants. */
function score(ms: readonly Mutant[]): { line: string; survivors: Mutant[] } {
  const n = (s: string): number => ms.filter((m) => m.status === s).length;
  const detected = n('Killed') + n('Timeout');
  const valid = detected + n('Survived') + n('NoCoverage');
  const pct = valid === 0 ? '-' : `${((100 * detected) / valid).toFixed(1)} %`;
  return {
    line: `${pct} | ${n('Killed')} | ${n('Timeout')} | ${n('Survived')} | ${n('NoCoverage')} | ${n('CompileError')}`,
    survivors: ms.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage'),
  };
}

const showSurvivors = process.argv.includes('--survivors');
const files = readdirSync(RESULTS).filter((f) => /^mutation-.+\.json$/.test(f)).sort();
console.log('| module | score | killed | timeout | survived | no coverage | type error (checker) | batch |');
console.log('|---|---|---|---|---|---|---|---|');
const lives: string[] = [];
for (const f of files) {
  const r = JSON.parse(readFileSync(path.join(RESULTS, f), 'utf8')) as Report;
  const batch = `${f.replace(/^mutation-|\.json$/g, '')}${r.pulse ? ` (${r.pulse.wallS} s, load ${r.pulse.load})` : ''}`;
  for (const [file, { source, mutants }] of Object.entries(r.files).sort(([a], [b]) => a.localeCompare(b))) {
    const s = score(mutants);
    console.log(`| ${file} | ${s.line} | ${batch} |`);
    const lines = source.split('\n');
    for (const m of s.survivors.sort((a, b) => a.location.start.line - b.location.start.line)) {
      const code = (lines[m.location.start.line - 1] ?? '').trim().slice(0, 90);
      lives.push(`| ${file}:${m.location.start.line} | ${m.status} | ${m.mutatorName} | \`${(m.replacement ?? '').replace(/\s+/g, ' ').replace(/\|/g, '\\|').slice(0, 60)}\` | \`${code.replace(/\|/g, '\\|')}\` |`);
    }
  }
}
if (showSurvivors) {
  console.log('\n| where | status | mutator | replacement | original line |\n|---|---|---|---|---|');
  for (const l of lives) console.log(l);
}
