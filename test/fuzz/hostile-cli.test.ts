/**
 * Hostile values through the real CLI (`node bin/pulse-cli model up ... --dry-run --nodes <fixture>`), table
 * driven: node vars, overlay paths and profile values that try `$( )`, backticks, `;`, newlines, quotes, `${IFS}`
 * and globs. Each is refused with a config error (exit 3) naming the file and line or JSON path, prints no
 * script, and runs nothing (the canary file is never created). A real `up` refuses the same input before it
 * contacts Temporal or a node (TEMPORAL_ADDRESS points at a closed port, so any contact would fail differently).
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { runCli, type CliResult } from '../helpers/cli.js';
import { scratch } from './gen.js';
import { REPO_ROOT } from '../helpers/paths.js';

const tmp = scratch('pulse-hostile-');
after(() => tmp.cleanup());
const C = tmp.canary;
const FLEET = path.join(REPO_ROOT, 'test/fixtures/nodes/fleet.json');
const BEST = readFileSync(path.join(REPO_ROOT, 'runtime/qwen38/profiles/best.env'), 'utf8');

interface Row {
  name: string;
  /** Files to write for the row; returns the CLI args after `model up`. */
  setup: (dir: string) => { args: string[]; env?: Record<string, string> };
  /** What the one-line error must name. */
  names: RegExp;
}

const INJECT = {
  subshell: `$(touch ${C})`,
  backtick: `\`touch ${C}\``,
  semicolon: `;touch ${C}`,
  newline: `\ntouch ${C}\n`,
  dquote: `"$(touch ${C})"`,
  squote: `'$(touch ${C})'`,
  ifs: `\${IFS}touch\${IFS}${C}`,
  glob: '/*',
} as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a fixture edited in place by each row
type Json = any;

function fleetWith(dir: string, edit: (j: Json) => void): string {
  const j = JSON.parse(readFileSync(FLEET, 'utf8')) as Json;
  edit(j);
  const file = path.join(dir, 'nodes.json');
  writeFileSync(file, JSON.stringify(j, null, 2));
  return file;
}

function profileDir(dir: string, text: string): Record<string, string> {
  const p = path.join(dir, 'profiles');
  mkdirSync(p, { recursive: true });
  writeFileSync(path.join(p, 'x.env'), text);
  return { PULSE_PROFILES_DIR: p };
}

function overlayDir(dir: string, name: string, args = '-e NCCL_DEBUG=INFO\n'): string {
  const o = path.join(dir, name);
  mkdirSync(o, { recursive: true });
  writeFileSync(path.join(o, 'docker-args.txt'), args);
  copyFileSync(path.join(REPO_ROOT, 'test/fixtures/overlays/wins/manifest.json'), path.join(o, 'manifest.json'));
  return o;
}

const rows: Row[] = [];
for (const [kind, v] of Object.entries(INJECT)) {
  rows.push(
    {
      name: `node var tritonCache with ${kind}`,
      setup: (d) => ({ args: ['best', '--node', 'spark2', '--nodes', fleetWith(d, (j) => (j.nodes.spark2.vars.tritonCache = `/srv/t${v}`))] }),
      names: /nodes\.json: nodes\.spark2\.vars\.tritonCache: /,
    },
    {
      name: `node env HF_HOME with ${kind}`,
      setup: (d) => ({ args: ['best', '--node', 'spark2', '--nodes', fleetWith(d, (j) => (j.nodes.spark2.env.HF_HOME = `/srv/hf${v}`))] }),
      names: /nodes\.json: nodes\.spark2\.env\.HF_HOME: /,
    },
    {
      name: `recipe dir with ${kind}`,
      setup: (d) => ({ args: ['best', '--node', 'spark2', '--nodes', fleetWith(d, (j) => (j.nodes.spark2.recipes['qwen38-flash'].dir = `/srv/r${v}`))] }),
      names: /nodes\.json: nodes\.spark2\.recipes\.qwen38-flash\.dir: /,
    },
    {
      name: `recipe dockerArgs with ${kind}`,
      setup: (d) => ({ args: ['best', '--node', 'spark2', '--nodes', fleetWith(d, (j) => (j.nodes.spark2.recipes['qwen38-flash'].dockerArgs = `-e A=1${v}`))] }),
      names: /nodes\.json: nodes\.spark2\.recipes\.qwen38-flash\.dockerArgs: /,
    },
    {
      name: `ssh target with ${kind}`,
      setup: (d) => ({ args: ['best', '--node', 'spark2', '--nodes', fleetWith(d, (j) => (j.nodes.spark2.ssh = `spark2${v}`))] }),
      names: /nodes\.json: nodes\.spark2\.ssh: /,
    },
    {
      name: `overlay folder path with ${kind}`,
      setup: (d) => ({ args: ['best', '--node', 'spark2', '--nodes', FLEET, '--overlay', overlayDir(d, `ov${v.replaceAll('/', '_')}`)] }),
      names: /--overlay .*the folder path|overlay folder path/,
    },
    {
      name: `overlay docker-args.txt with ${kind}`,
      setup: (d) => ({ args: ['best', '--node', 'spark2', '--nodes', FLEET, '--overlay', overlayDir(d, 'ov', `-e A=1${v}\n`)] }),
      names: /\/ov\/docker-args\.txt:\d+: /,
    },
    {
      name: `profile unquoted value with ${kind}`,
      setup: (d) => ({ args: ['x', '--node', 'spark2', '--nodes', FLEET], env: profileDir(d, `# pulse-recipe: qwen38-flash\nMAX_NUM_SEQS=4${v}\n`) }),
      names: /x\.env:[23]: /,
    },
    {
      name: `profile EXTRA_DOCKER_ARGS with ${kind}`,
      setup: (d) => ({ args: ['x', '--node', 'spark2', '--nodes', FLEET], env: profileDir(d, `# pulse-recipe: qwen38-flash\nEXTRA_DOCKER_ARGS="-e A=1${v.replaceAll('"', '')}"\n`) }),
      names: /x\.env:[23]: /,
    },
    {
      name: `profile pulse-mkdir with ${kind}`,
      setup: (d) => ({ args: ['x', '--node', 'spark2', '--nodes', FLEET], env: profileDir(d, `# pulse-recipe: qwen38-flash\n# pulse-mkdir: /srv/m${v}\nMAX_NUM_SEQS=4\n`) }),
      names: /x\.env:[23]: /,
    },
  );
}
// Double-quoted profile values: bash keeps ; * ' literal inside the quotes, but start.sh pastes every value unquoted
// into its launch script, so those are refused too (issue 10: `& touch` in EXTRA_VLLM_ARGS, `>FILE` in KV_CACHE_DTYPE).
const QUOTED = { subshell: INJECT.subshell, backtick: INJECT.backtick, ifs: INJECT.ifs, dquote: '"', backslash: '\\$(id)', newline: '\nid',
  semicolon: `;touch ${C}`, ampersand: ` & touch ${C} & wait`, redirect: ` >${C}`, glob: ' /*', squote: "'", brace: ' {a,b}', tilde: ' ~root', bang: ' !x' };
for (const [kind, v] of Object.entries(QUOTED)) {
  // EXTRA_VLLM_ARGS may span lines (a newline there is a word separator, as the spec allows).
  for (const key of kind === 'newline' ? ['MODEL', 'KV_CACHE_DTYPE'] : ['MODEL', 'KV_CACHE_DTYPE', 'EXTRA_VLLM_ARGS']) {
    rows.push({
      name: `profile double-quoted ${key} with ${kind}`,
      setup: (d) => ({ args: ['x', '--node', 'spark2', '--nodes', FLEET], env: profileDir(d, `# pulse-recipe: qwen38-flash\n${key}="a${v}b"\n`) }),
      names: /x\.env:[23]: /,
    });
  }
}
rows.push({
  name: 'a shipped profile with a var that a hostile nodes.json would fill',
  setup: (d) => ({ args: ['x', '--node', 'spark2', '--nodes', fleetWith(d, (j) => (j.nodes.spark2.vars.mtpShardR2 = '/a;id'))], env: profileDir(d, BEST) }),
  names: /nodes\.json: nodes\.spark2\.vars\.mtpShardR2: /,
});

function assertRefused(r: CliResult, row: Row): void {
  const where = `${row.name}: exit ${r.code}\n${r.stdout}${r.stderr}`;
  assert.equal(r.code, 3, where);
  assert.equal(r.stdout, '', `${row.name}: nothing may be printed on stdout (no plan, no script)`);
  const first = r.stderr.split('\n')[0] ?? '';
  assert.match(first, /^pulse: /, where);
  assert.match(first, row.names, where);
  assert.doesNotMatch(r.stderr, /\n\s+at /, `${row.name}: no stack trace`);
  assert.equal(existsSync(C), false, `${row.name}: the canary was created`);
}

async function runRows(dryRun: boolean, selected: Row[]): Promise<void> {
  const queue = [...selected.entries()];
  const worker = async (): Promise<void> => {
    for (let item = queue.shift(); item; item = queue.shift()) {
      const [i, row] = item;
      const dir = path.join(tmp.dir, `${dryRun ? 'd' : 'u'}${i}`);
      mkdirSync(dir);
      const { args, env } = row.setup(dir);
      const r = await runCli(['model', 'up', ...args, ...(dryRun ? ['--dry-run'] : [])], {
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        PULSE_STATE_DIR: path.join(dir, 'state'),
        PULSE_SSH_CONFIG: '/dev/null',
        ...env,
      });
      assertRefused(r, row);
      assert.equal(existsSync(path.join(dir, 'state', 'temporal')), false, `${row.name}: no embedded server started`);
    }
  };
  await Promise.all([worker(), worker(), worker()]);
}

test(`hostile values: ${rows.length} table rows refused by \`pulse model up --dry-run\`, one line naming file and line or path`, async () => {
  await runRows(true, rows);
});

test('the same hostile values are refused by a real `up` before it contacts Temporal or a node', async () => {
  // One row per source (node var, overlay path, overlay args, profile value): the plan is built before any contact.
  await runRows(false, rows.filter((r) => r.name.endsWith('with subshell')));
});

test('the table can fail: a clean input is accepted by the same runner', async () => {
  const r = await runCli(['model', 'up', 'best', '--node', 'spark2', '--nodes', FLEET, '--dry-run'], { PULSE_STATE_DIR: path.join(tmp.dir, 'clean') });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /EXTRA_DOCKER_ARGS="/);
});
