/**
 * The exit-code table (runtime/failures.ts) from real commands that need no node and no Temporal server: usage (2),
 * config (3, an unknown node is 3 in every command), refused (4), Temporal unreachable (10); one error style
 * (`pulse: …`, then one indented line), did-you-mean, `--version` and help that teaches. The node and deploy codes are
 * proven against the simulator (test/deploy/exit-codes-sim.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { FAILURES, exitCodeLines } from '../../runtime/failures.js';
import { buildProgram } from '../../cli/program.js';
import type { Command } from 'commander';

const fleet = path.join(REPO_ROOT, 'test/fixtures/nodes/fleet.json');
const sandbox = mkdtempSync(path.join(os.tmpdir(), 'pulse-exit-codes-'));
// A dead Temporal address (nothing listens on port 1) and a sandboxed state dir: nothing here may reach either first.
const env = { HOME: sandbox, XDG_STATE_HOME: path.join(sandbox, 'state'), PULSE_STATE_DIR: path.join(sandbox, 'pulse'), TEMPORAL_ADDRESS: '127.0.0.1:1', PULSE_PROFILES_DIR: '', PULSE_NODES: fleet };
const pulse = (args: string[]) => runCli(args, env);

/** One `pulse: …` line, then at most one indented hint line: the one error style. */
function oneError(stderr: string, first: RegExp): void {
  const lines = stderr.trimEnd().split('\n');
  assert.ok(lines.length <= 2, stderr);
  assert.match(lines[0] ?? '', first);
  if (lines[1] !== undefined) assert.match(lines[1], /^ {2}\S/, stderr);
  assert.doesNotMatch(stderr, /^error:|add --help for usage/m, stderr);
}

const unknownNode = /^pulse: unknown node "spark9"; known nodes: spark1, spark2, spark3$/;

const cases: { name: string; args: string[]; code: number; first: RegExp }[] = [
  // usage (2)
  { name: 'unknown command, with a did-you-mean', args: ['model', 'statu'], code: 2, first: /^pulse: unknown command 'statu'; did you mean status\?$/ },
  { name: 'mistyped required option, with a did-you-mean', args: ['model', 'up', 'best', '--nod', 'spark2'], code: 2, first: /^pulse: unknown option '--nod'; did you mean --node\?$/ },
  { name: 'missing required option', args: ['model', 'up', 'best'], code: 2, first: /^pulse: --node is required$/ },
  { name: 'missing --node on down', args: ['model', 'down'], code: 2, first: /^pulse: --node is required$/ },
  { name: 'bad number', args: ['model', 'up', 'best', '--node', 'spark2', '--timeout-s', 'x', '--dry-run'], code: 2, first: /^pulse: .*--timeout-s must be a time like 90, 45s, 10m or 1h30m/ },
  { name: 'a node named twice in a list', args: ['model', 'up', 'best', '--node', 'spark2,spark2', '--dry-run'], code: 2, first: /^pulse: .*--node names spark2 twice$/ },
  { name: '--node given twice (commander would keep the last)', args: ['model', 'up', 'best', '--node', 'spark2', '--node', 'spark3', '--dry-run'], code: 2, first: /^pulse: .*--node is given twice/ },
  { name: '--node given twice to status', args: ['model', 'status', '--node', 'spark2', '--node', 'spark3'], code: 2, first: /^pulse: .*--node is given twice/ },
  { name: 'a bad duration', args: ['model', 'up', 'best', '--node', 'spark2', '--timeout-s', '10 minutes', '--dry-run'], code: 2, first: /^pulse: .*--timeout-s must be a time like 90, 45s, 10m or 1h30m, from 1s to 48h, got "10 minutes"$/ },
  { name: '--preflight without --dry-run', args: ['model', 'up', 'best', '--node', 'spark2', '--preflight'], code: 2, first: /^pulse: --preflight works only with --dry-run$/ },
  // config (3): an unknown node or profile, the same in every command, before any connection
  { name: 'unknown profile, with a did-you-mean', args: ['model', 'up', 'bets', '--node', 'spark2'], code: 3, first: /^pulse: unknown profile "bets"; did you mean best\? known profiles: best, capture, datagen, tp2$/ },
  { name: 'unknown profile (dry-run)', args: ['model', 'up', 'nope', '--node', 'spark2', '--dry-run'], code: 3, first: /^pulse: unknown profile "nope"; known profiles: best, capture, datagen, tp2$/ },
  { name: 'unknown node, with a did-you-mean', args: ['model', 'up', 'best', '--node', 'sprak2', '--dry-run'], code: 3, first: /^pulse: unknown node "sprak2"; did you mean spark2\? known nodes/ },
  { name: 'unknown node: up --dry-run', args: ['model', 'up', 'best', '--node', 'spark9', '--dry-run'], code: 3, first: unknownNode },
  { name: 'unknown node: up', args: ['model', 'up', 'best', '--node', 'spark9'], code: 3, first: unknownNode },
  { name: 'unknown node: down', args: ['model', 'down', '--node', 'spark9'], code: 3, first: unknownNode },
  { name: 'unknown node: status', args: ['model', 'status', '--node', 'spark9'], code: 3, first: unknownNode },
  { name: 'unknown node: smoke', args: ['model', 'smoke', '--node', 'spark9'], code: 3, first: unknownNode },
  { name: 'unknown node: watch', args: ['model', 'watch', '--node', 'spark9'], code: 3, first: unknownNode },
  { name: 'unknown node: cancel', args: ['model', 'cancel', '--node', 'spark9'], code: 3, first: unknownNode },
  { name: 'unknown node: cancel --yes', args: ['model', 'cancel', '--node', 'spark9', '--yes'], code: 3, first: unknownNode },
  { name: 'unknown node: history', args: ['model', 'history', '--node', 'spark9'], code: 3, first: unknownNode },
  { name: 'a missing nodes.json', args: ['--nodes', '/nonexistent/nodes.json', 'model', 'status'], code: 3, first: /^pulse: \/nonexistent\/nodes\.json: not found$/ },
  // refused (4)
  { name: 'protected node', args: ['model', 'up', 'best', '--node', 'spark1'], code: 4, first: /^pulse: node spark1 is protected; add --yes/ },
  { name: 'render-only profile', args: ['model', 'up', 'tp2', '--node', 'spark1', '--yes'], code: 4, first: /^pulse: profile tp2 is render-only/ },
  // one answer on every node: render-only, also where the node lacks the profile's recipe (spark2 has no qwen38-dual)
  { name: 'render-only profile on a node without its recipe', args: ['model', 'up', 'tp2', '--node', 'spark2'], code: 4, first: /^pulse: profile tp2 is render-only/ },
  // Temporal unreachable (10)
  { name: 'history with no Temporal server', args: ['model', 'history'], code: 10, first: /^pulse: cannot reach the Temporal server at 127\.0\.0\.1:1/ },
];

for (const c of cases) {
  test(`exit ${c.code}: ${c.name}`, async () => {
    const r = await pulse(c.args);
    assert.equal(r.code, c.code, r.stderr);
    oneError(r.stderr, c.first);
    assert.equal(r.stdout, '');
  });
}

test('durations: --timeout-s takes 10m and 1h30m as --every does (one grammar), and the plan says the seconds', async () => {
  for (const [given, seconds] of [['10m', 600], ['1h30m', 5400], ['45s', 45], ['90', 90]] as const) {
    const r = await pulse(['model', 'up', 'best', '--node', 'spark2', '--timeout-s', given, '--dry-run']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^readiness: wait up to ${seconds} s for /v1/models`, 'm'), given);
  }
});

test('the codes above are the table\'s', () => {
  assert.deepEqual([FAILURES.usage.exit, FAILURES.config.exit, FAILURES.refused.exit, FAILURES.temporal.exit], [2, 3, 4, 10]);
});

test('--version prints the package version, the commit, the workflow build, the SDK and the embedded server, and exits 0', async () => {
  const r = await pulse(['--version']);
  assert.equal(r.code, 0, r.stderr);
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
  const [first, sdk, server] = r.stdout.trimEnd().split('\n');
  assert.match(first ?? '', new RegExp(`^pulse ${pkg.version.replace(/\./g, '\\.')} \\(commit [0-9a-f]{12}, workflow build ${pkg.version.replace(/\./g, '\\.')}-[0-9a-f]{12}\\)$`));
  assert.equal(sdk, `Temporal TypeScript SDK ${pkg.dependencies['@temporalio/client']}`);
  assert.match(server ?? '', /^embedded Temporal server: temporal CLI \d+\.\d+\.\d+ \(Server \d+\.\d+\.\d+, UI \d+\.\d+\.\d+\)$/);
  const later = await pulse(['--nodes', 'x.json', '--version']);
  assert.equal(later.stdout, r.stdout, 'global options before --version change nothing');
});

test('pulse --help fits the commands on an 80x24 screen; exit codes and the environment are help topics of their own', async () => {
  for (const args of [['--help'], ['model', '--help']]) {
    const r = await pulse(args);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.split('\n').length <= 24 + 10, `${args.join(' ')}: ${r.stdout.split('\n').length} lines`);
    assert.doesNotMatch(r.stdout, /^Exit codes:$|^Environment:$/m, args.join(' '));
    assert.match(r.stdout, /Exit codes: pulse help exit-codes · environment: pulse help environment/);
  }
  const codes = await pulse(['help', 'exit-codes']);
  assert.equal(codes.code, 0, codes.stderr);
  for (const line of exitCodeLines()) assert.ok(codes.stdout.includes(line), `help exit-codes lists: ${line}`);
  const env = await pulse(['help', 'environment']);
  assert.equal(env.code, 0, env.stderr);
  for (const v of ['PULSE_NODES', 'PULSE_STATE_DIR', 'TEMPORAL_ADDRESS', 'PULSE_STATUS_TIMEOUT_S', 'NO_COLOR']) assert.match(env.stdout, new RegExp(`^  ${v}\\b`, 'm'));
  const model = await pulse(['model', '--help']);
  assert.match(model.stdout, /^Examples:$/m);
});

test('pulse help model up prints up\'s help (not model\'s), with examples and the required option marked', async () => {
  const r = await pulse(['help', 'model', 'up']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Usage: pulse model up \[options\] <profile>/m);
  assert.match(r.stdout, /--node <node> +node name from nodes\.json \(required\)/);
  assert.match(r.stdout, /^Examples:\n {2}pulse model up best --node spark2/m);
  const same = await pulse(['model', 'up', '--help']);
  assert.equal(same.stdout, r.stdout);
});

/** Every command path of the program itself (`model up`, `model watchdog on`, `server stop`...), help excluded. */
function commandPaths(): string[] {
  const out: string[] = [];
  const walk = (c: Command, pre: string[]): void => {
    for (const sub of c.commands) {
      if (sub.name() === 'help') continue;
      out.push([...pre, sub.name()].join(' '));
      walk(sub, [...pre, sub.name()]);
    }
  };
  walk(buildProgram(() => undefined), []);
  return out;
}

test('every command\'s --help has examples of itself and names the exit codes (every command of the program, not a list)', async () => {
  const paths = commandPaths();
  assert.ok(paths.includes('model up') && paths.includes('model watchdog on') && paths.includes('worker'), paths.join(', '));
  for (const p of paths) {
    const r = await pulse([...p.split(' '), '--help']);
    assert.equal(r.code, 0, `${p}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^Examples:\\n {2}pulse ${p}\\b`, 'm'), `${p}:\n${r.stdout}`);
    assert.match(r.stdout, /Exit codes: pulse help exit-codes/, p);
  }
});
