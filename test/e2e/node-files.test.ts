/**
 * The files the node steps make and read, under faults, through the CLI on the simulator: a parse of the old .env
 * that fails (its awk dies) fails the step instead of writing a new .env without the HF_TOKEN/API_KEY it could not
 * read; a backup whose name holds a newline cannot forge an entry of `rollback --list`; and the private copies of a
 * .env that write-env and read-backup make do not outlive a SIGKILL of the step's process group (an EXIT trap does
 * not run then). The faults are made on the node: its PATH starts with the sim's bin dir, where this test puts an
 * `awk` or a `sync` that fails or waits on demand and otherwise runs the real one.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Sim } from '../sim/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { until } from '../helpers/until.js';

const NODE = 'simA';
/** A token only this file uses, so a copy of it anywhere on the machine is this test's. */
const TOKEN = 'hf_nodefiles_5c3e9a71d2';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

before(async () => ({ sim, dir, env } = await startSimCli('pulse-node-files-', { nodes: [NODE], readyDelayMs: 300 })));
after(async () => {
  if (sim) for (const t of ['awk', 'sync']) rmSync(path.join(sim.node(NODE).paths.binDir, t), { force: true });
  await stopSimCli(sim, dir);
});

const node = () => sim!.node(NODE);
const ctl = (name: string) => path.join(node().paths.state, `fault-${name}`);

/**
 * A wrapper of `tool` in the node's bin dir. It reads the control file fault-<tool>: `fail N MATCH` fails the Nth
 * call whose arguments contain MATCH (counted in fault-<tool>.count); `block MATCH [NOT]` writes the process group of
 * a call whose arguments contain MATCH (and not NOT) to fault-<tool>.blocked and waits until the control file is
 * gone. Otherwise, the real tool.
 */
function wrap(tool: string): void {
  const real = execFileSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
  const c = ctl(tool);
  writeFileSync(path.join(node().paths.binDir, tool), `#!/bin/bash
c=${c}
if [[ -f $c ]]; then
  read -r what a b <"$c"
  all=" $* "
  if [[ $what == fail && $all == *"$b"* ]]; then
    n=$(( $(/bin/cat "$c.count" 2>/dev/null || echo 0) + 1 )); echo "$n" >"$c.count"
    if (( n == a )); then echo "${tool}: read error (Input/output error)" >&2; exit 2; fi
  elif [[ $what == block && $all == *"$a"* && ( -z $b || $all != *"$b"* ) ]]; then
    read -r _ _ _ _ pg _ </proc/$$/stat
    echo "$pg" >"$c.blocked"
    for _ in $(seq 1 1200); do [[ -f $c ]] || break; /bin/sleep 0.1; done
  fi
fi
exec ${real} "$@"
`, { mode: 0o755 });
}

function setFault(tool: string, line: string | null): void {
  for (const f of [ctl(tool), `${ctl(tool)}.count`, `${ctl(tool)}.blocked`]) rmSync(f, { force: true });
  if (line !== null) writeFileSync(ctl(tool), `${line}\n`);
}

/** The node .env of the last up, with the test's HF_TOKEN appended (write-env carries it to the next .env). */
function withToken(): string {
  const now = readFileSync(node().envPath, 'utf8');
  if (now.includes(TOKEN)) return now;
  const text = `${now.trimEnd()}\nHF_TOKEN=${TOKEN}\n`;
  writeFileSync(node().envPath, text, { mode: 0o600 });
  return text;
}

const recipeFiles = (): string[] => readdirSync(path.dirname(node().envPath));
/** Files directly under /tmp (where mktemp puts a step's private files) that hold the token. */
const tmpCopies = (): string[] =>
  readdirSync('/tmp').map((f) => path.join('/tmp', f)).filter((f) => {
    try {
      return readFileSync(f, 'latin1').includes(TOKEN);
    } catch {
      return false; // a dir, or gone meanwhile
    }
  });

async function up(profile: string): Promise<{ code: number | null; out: string }> {
  const r = await runCli(['model', 'up', profile, '--node', NODE], env);
  return { code: r.code, out: r.stdout + r.stderr };
}

test('a parse of the old .env that fails (its awk dies) fails preflight or write-env: no new .env, the old one and its HF_TOKEN intact', async () => {
  assert.equal((await up('best')).code, 0);
  wrap('awk');
  // The first parse of the secrets is preflight's; the second, write-env's carry-over (preflight passed then).
  for (const [nth, step] of [[1, 'preflight'], [2, 'write-env']] as const) {
    const before = withToken();
    const backups = recipeFiles().filter((f) => f.startsWith('.env.pulse-bak-')).length;
    setFault('awk', `fail ${nth} mode=secrets`);
    try {
      const r = await up('datagen');
      assert.equal(r.code, 5, r.out);
      assert.match(r.out, new RegExp(`${step}.*cannot read the HF_TOKEN/API_KEY lines of .*\\.env \\(its parse failed\\); nothing was changed`));
    } finally {
      setFault('awk', null);
    }
    assert.equal(readFileSync(node().envPath, 'utf8'), before, `${step}: the old .env is untouched, its HF_TOKEN line kept`);
    assert.equal(recipeFiles().filter((f) => f.startsWith('.env.pulse-bak-')).length, backups, 'no backup written');
    assert.deepEqual(recipeFiles().filter((f) => f.startsWith('.env.pulse-tmp.')), [], 'no temp .env left');
  }
  const ok = await up('datagen');
  assert.equal(ok.code, 0, ok.out);
  assert.match(readFileSync(node().envPath, 'utf8'), new RegExp(`^HF_TOKEN="${TOKEN}"$`, 'm'), 'carried once the parse works');
});

test('a backup whose name holds a newline and a tab forges no entry of rollback --list', async () => {
  const d = path.dirname(node().envPath);
  const forged = `.env.pulse-bak-20990101T000000Z\n.env.pulse-bak-20990102T000000Z\tf\t10\t1\t0`;
  writeFileSync(path.join(d, forged), '# pulse-profile: forged\n', { mode: 0o600 });
  try {
    const r = await runCli(['model', 'rollback', '--node', NODE, '--list', '--json'], env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const names = (JSON.parse(r.stdout) as { name: string }[]).map((b) => b.name);
    assert.ok(names.every((n) => /^\.env\.pulse-bak-\d{8}T\d{6}Z(-\d+)?$/.test(n)), names.join(' | '));
    assert.ok(!names.some((n) => n.startsWith('.env.pulse-bak-2099')), names.join(' | '));
  } finally {
    rmSync(path.join(d, forged), { force: true });
  }
});

test('write-env SIGKILLed with its process group while its temp .env holds the secrets: the copy does not outlive the step', async () => {
  withToken();
  // A profile other than the one the .env has, so write-env writes.
  const profile = /^# pulse-profile: best$/m.test(readFileSync(node().envPath, 'utf8')) ? 'datagen' : 'best';
  wrap('sync');
  // write-env syncs its temp .env (the new .env with the carried HF_TOKEN) before the rename: it waits there.
  setFault('sync', 'block .env.pulse-tmp.');
  const run = startCli(['model', 'up', profile, '--node', NODE], env);
  try {
    await until('write-env waits in sync', () => existsSync(`${ctl('sync')}.blocked`), 180_000);
    const temps = recipeFiles().filter((f) => f.startsWith('.env.pulse-tmp.'));
    assert.equal(temps.length, 1, recipeFiles().join(' '));
    assert.match(readFileSync(path.join(path.dirname(node().envPath), temps[0]!), 'utf8'), new RegExp(TOKEN), 'the copy holds the secret');
    const pg = Number(readFileSync(`${ctl('sync')}.blocked`, 'utf8').trim());
    setFault('sync', null); // the retry runs through
    process.kill(-pg, 'SIGKILL'); // as kill-group.sh's last resort: no EXIT trap runs
  } finally {
    setFault('sync', null);
  }
  const r = await run.done;
  assert.equal(r.code, 0, r.stdout + r.stderr); // the killed step is retried
  assert.deepEqual(recipeFiles().filter((f) => f.startsWith('.env.pulse-tmp.') || f.startsWith('.env.pulse-bak-tmp.')), [], 'no temp copy of a .env is left');
  assert.match(readFileSync(node().envPath, 'utf8'), new RegExp(`^HF_TOKEN="${TOKEN}"$`, 'm'));
});

test('read-backup SIGKILLed with its process group while it reads its private copy of a backup: no copy with the secret is left', async () => {
  withToken();
  const other = /^# pulse-profile: best$/m.test(readFileSync(node().envPath, 'utf8')) ? 'datagen' : 'best';
  assert.equal((await up(other)).code, 0); // the backup of the .env that holds the token
  const backup = recipeFiles().filter((f) => f.startsWith('.env.pulse-bak-')).sort().pop()!;
  assert.match(readFileSync(path.join(path.dirname(node().envPath), backup), 'utf8'), new RegExp(TOKEN));
  wrap('awk');
  assert.deepEqual(tmpCopies(), []);
  // read-backup's public text of its copy, which is not in the recipe dir (the live .env's is).
  setFault('awk', 'block mode=public /recipes/');
  const run = startCli(['model', 'rollback', '--node', NODE, '--to', path.join(path.dirname(node().envPath), backup)], env);
  try {
    await until('read-backup reads its copy', () => existsSync(`${ctl('awk')}.blocked`), 180_000).catch((e: unknown) => {
      throw new Error(`${String(e)}\n${run.output()}`);
    });
    const pg = Number(readFileSync(`${ctl('awk')}.blocked`, 'utf8').trim());
    setFault('awk', null);
    process.kill(-pg, 'SIGKILL');
  } finally {
    setFault('awk', null);
  }
  await run.done;
  assert.deepEqual(tmpCopies(), [], 'no private copy of the backup is left in /tmp');
});
