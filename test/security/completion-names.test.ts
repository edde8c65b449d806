/**
 * `rollback --node N --to <TAB>` lists the node's .env backups over ssh: file names that anyone who can write in a
 * recipe dir chooses (SECURITY.md treats such a writer as an attacker). Through the real pulse and a simulated node
 * (real sshd), in a real bash and in zsh's bashcompinit layer: names built to run code at TAB never run, and only
 * names of the form write-env gives are offered.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Sim } from '../sim/index.js';
import { CLI } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-completion-names-', { nodes: ['spark1'] }));
});
after(() => stopSimCli(sim, dir));

const LEGIT = ['.env.pulse-bak-20261201T101500Z', '.env.pulse-bak-20261201T101500Z-2'];
// Each would create a file named PWNED<n> in the shell's working directory if any shell evaluated it.
const HOSTILE = [
  '.env.pulse-bak-$(touch${IFS}PWNED1)',
  '.env.pulse-bak-`touch PWNED2`',
  '.env.pulse-bak-20261201T101500Z$(touch PWNED3)',
  '.env.pulse-bak-*',
  '.env.pulse-bak-a b',
  '.env.pulse-bak-20261201T101500Z\n.env.pulse-bak-20261202T000000Z',
];

test('TAB after rollback --to: hostile backup names on the node never run, in bash and zsh; only write-env\'s names are offered', () => {
  const s = sim as Sim;
  for (const name of [...LEGIT, ...HOSTILE]) writeFileSync(path.join(s.node('spark1').recipeDir, name), 'MODEL=x\n', { mode: 0o600 });
  const cwd = path.join(dir, 'shell');
  const bin = path.join(dir, 'bin');
  mkdirSync(cwd);
  mkdirSync(bin);
  symlinkSync(CLI, path.join(bin, 'pulse'));
  const script = (shell: string): string => {
    const r = spawnSync(process.execPath, [CLI, 'completion', shell], { encoding: 'utf8', env: { ...process.env, ...env } });
    assert.equal(r.status, 0, r.stderr);
    const file = path.join(dir, `completion.${shell}`);
    writeFileSync(file, r.stdout);
    return file;
  };
  const words = ['pulse', 'model', 'rollback', '--node', 'spark1', '--to', ''];
  const arr = words.map((w) => `'${w}'`).join(' ');
  const shellEnv = { ...process.env, ...env, PATH: `${bin}:${process.env['PATH'] ?? ''}` };
  const bash = spawnSync('bash', ['--norc', '--noprofile', '-c',
    `source '${script('bash')}'; COMP_WORDS=(${arr}); COMP_CWORD=${words.length - 1}; _pulse; printf '%s\\n' "\${COMPREPLY[@]}"`],
  { encoding: 'utf8', cwd, env: shellEnv });
  assert.equal(bash.status, 0, bash.stderr);
  // zsh: _bash_complete's own steps (COMP_WORDS from compsys's words, COMP_CWORD, its compgen -F) but the compadd.
  const zsh = spawnSync('zsh', ['-f', '-c',
    `autoload -U compinit && compinit -u -D; source '${script('zsh')}'; words=(${arr}); CURRENT=${words.length}; ` +
    `local -a COMP_WORDS; COMP_WORDS=( "\${words[@]}" ); (( COMP_CWORD = CURRENT - 1 )); compgen -F _pulse -- ''`],
  { encoding: 'utf8', cwd, env: shellEnv });
  for (const [shell, r] of [['bash', bash], ['zsh', zsh]] as const) {
    const offered = r.stdout.split('\n').filter((l) => l !== '');
    assert.deepEqual(offered.sort(), [...LEGIT].sort(), `${shell} offered exactly write-env's names\n${r.stderr}`);
  }
  for (const n of [1, 2, 3]) assert.equal(existsSync(path.join(cwd, `PWNED${n}`)), false, `PWNED${n}: a backup's name ran as code at TAB`);
  // The list itself: pulse hands the shells write-env's names only (a node's directory may hold any name).
  const list = spawnSync(process.execPath, [CLI, 'completion', '--list', 'backups', '--node', 'spark1'], { encoding: 'utf8', env: { ...process.env, ...env } });
  assert.equal(list.status, 0, list.stderr);
  assert.deepEqual(list.stdout.split('\n').filter((l) => l !== '').sort(), [...LEGIT].sort());
});
