/**
 * Shell completion generated from the command table (`pulse completion bash|zsh`): the bash script is sourced in a
 * real bash and asked what `pulse model u`, `pulse model up <TAB>`, `--node <TAB>` and options complete to; names
 * come from pulse at completion time (profiles of PULSE_PROFILES_DIR, nodes of the --nodes file on the line), so a
 * new command, option or profile completes without editing the script.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';

const cli = path.join(REPO_ROOT, 'bin/pulse-cli');
const fleet = path.join(REPO_ROOT, 'test/fixtures/nodes/fleet.json');

function script(shell: string): string {
  const r = spawnSync(process.execPath, [cli, 'completion', shell], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

/** What bash completes for the words (the last one is the word under the cursor). */
function complete(file: string, bin: string, words: string[], cwd?: string): string[] {
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const body = `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _pulse; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', body], { encoding: 'utf8', ...(cwd ? { cwd } : {}), env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, PULSE_PROFILES_DIR: '' } });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => l !== '');
}

test('the bash script completes commands, options, profile names and node names', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-completion-'));
  try {
    const file = path.join(dir, 'pulse.bash');
    writeFileSync(file, script('bash'));
    const bin = path.join(dir, 'bin');
    spawnSync('mkdir', [bin]);
    symlinkSync(cli, path.join(bin, 'pulse'));
    assert.deepEqual(complete(file, bin, ['pulse', 'model', 'u']), ['up']);
    assert.deepEqual(complete(file, bin, ['pulse', 'mo']), ['model']);
    assert.deepEqual(complete(file, bin, ['pulse', 'model', 'l']), ['logs']);
    assert.deepEqual(complete(file, bin, ['pulse', 'model', 'up', '']), ['best', 'capture', 'datagen', 'tp2'], 'the shipped profiles');
    assert.deepEqual(complete(file, bin, ['pulse', 'model', 'diff', 'd']), ['datagen']);
    assert.deepEqual(complete(file, bin, ['pulse', 'model', 'up', 'best', '--no']), ['--node', '--no-drain', '--nodes']);
    assert.deepEqual(complete(file, bin, ['pulse', 'model', 'logs', '--ta']), ['--tail']);
    assert.deepEqual(complete(file, bin, ['pulse', '--nodes', fleet, 'model', 'up', 'best', '--node', '']), ['spark1', 'spark2', 'spark3'], 'the nodes of --nodes');
    assert.deepEqual(complete(file, bin, ['pulse', 'model', 'up', 'best', '']), [], 'one profile only');
    // a list: the next node after a comma, each named once (issue 30 item 12)
    assert.deepEqual(complete(file, bin, ['pulse', '--nodes', fleet, 'model', 'up', 'best', '--node', 'spark2,']), ['spark2,spark1', 'spark2,spark3']);
    assert.deepEqual(complete(file, bin, ['pulse', '--nodes', fleet, 'model', 'up', 'best', '--node', 'spark2,spark1,s']), ['spark2,spark1,spark3']);
    // the shells of `pulse completion`
    assert.deepEqual(complete(file, bin, ['pulse', 'completion', '']), ['bash', 'zsh']);
    assert.deepEqual(complete(file, bin, ['pulse', 'completion', 'z']), ['zsh']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the zsh script runs the same function through bashcompinit; an unknown shell is a usage error (2)', () => {
  const zsh = script('zsh');
  assert.match(zsh, /^#compdef pulse\n/);
  assert.match(zsh, /autoload -U \+X bashcompinit && bashcompinit/);
  assert.ok(zsh.includes(script('bash')), 'the bash function, unchanged');
  const r = spawnSync(process.execPath, [cli, 'completion', 'fish'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^pulse: command-argument value 'fish' is invalid for argument 'shell'\. Allowed choices are bash, zsh\./);
});

/**
 * What `--list` prints is data. A fake pulse answers every `completion --list` with names a hostile directory or
 * node could hold; neither shell may run them (compgen -W would: it expands $(...) in its words) or offer them.
 */
const HOSTILE = ['$(touch PWNED1)', '`touch PWNED2`', '$(touch${IFS}PWNED3)', '*', 'a b', 'x;touch PWNED4', 'good-1', 'good-2'];

/**
 * The completion that zsh's own bashcompinit layer computes: _bash_complete's own steps (COMP_WORDS from compsys's
 * words, COMP_CWORD, then its compgen -F), all but the final compadd, which only a live completion widget may call.
 */
function zshComplete(file: string, bin: string, cwd: string, words: string[]): string[] {
  const arr = words.map((w) => `'${w}'`).join(' ');
  const body = `autoload -U compinit && compinit -u -D; source '${file}'; words=(${arr}); CURRENT=${words.length}; local -a COMP_WORDS; COMP_WORDS=( "\${words[@]}" ); (( COMP_CWORD = CURRENT - 1 )); compgen -F _pulse -- '${words[words.length - 1]}'`;
  const r = spawnSync('zsh', ['-f', '-c', body], { encoding: 'utf8', cwd, env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, PULSE_PROFILES_DIR: '' } });
  assert.equal(r.status === 0 || r.status === 1, true, r.stderr);
  return r.stdout.split('\n').filter((l) => l !== '');
}

test('names from pulse are data in bash and zsh: nothing in them runs, only plain names are offered', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-completion-hostile-'));
  try {
    const bin = path.join(dir, 'bin');
    spawnSync('mkdir', [bin]);
    writeFileSync(path.join(bin, 'pulse'), `#!/bin/sh\nprintf '%s\\n' ${HOSTILE.map((h) => `'${h.replace(/'/g, `'\\''`)}'`).join(' ')}\n`, { mode: 0o755 });
    const bashFile = path.join(dir, 'pulse.bash');
    writeFileSync(bashFile, script('bash'));
    const zshFile = path.join(dir, '_pulse');
    writeFileSync(zshFile, script('zsh'));
    const cases: [string[], string[]][] = [
      [['pulse', 'model', 'rollback', '--node', 'spark2', '--to', ''], ['good-1', 'good-2']],
      [['pulse', 'model', 'rollback', '--node', 'spark2', '--to', 'good-2'], ['good-2']],
      [['pulse', 'model', 'up', ''], ['good-1', 'good-2']],
      [['pulse', 'model', 'up', 'best', '--node', ''], ['good-1', 'good-2']],
      [['pulse', 'model', 'up', 'best', '--node', 'good-1,'], ['good-1,good-2']],
    ];
    for (const [words, want] of cases) {
      assert.deepEqual(complete(bashFile, bin, words, dir), want, `bash: ${words.join(' ')}`);
      assert.deepEqual(zshComplete(zshFile, bin, dir, words), want, `zsh: ${words.join(' ')}`);
    }
    for (const n of [1, 2, 3, 4]) assert.equal(existsSync(path.join(dir, `PWNED${n}`)), false, `PWNED${n}: a name was run as code`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
