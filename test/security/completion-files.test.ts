/**
 * `pulse --nodes <TAB>` completes file names of the working directory: names anyone who can write there chooses (a
 * shared directory, a cloned repository). In a real interactive bash (readline on a pty, through script(1)), a
 * completed name is put on the command line: it must be put there quoted, as bash's own file completion does, or
 * the operator's next Enter runs what the name holds. (zsh's bashcompinit layer quotes each match; bash quotes
 * only when the completion says its words are file names: complete/compopt -o filenames.)
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../helpers/paths.js';

const cli = path.join(REPO_ROOT, 'bin/pulse-cli');

test('TAB after --nodes in an interactive bash: a hostile file name goes on the line quoted and never runs at Enter', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-completion-files-'));
  try {
    const gen = spawnSync(process.execPath, [cli, 'completion', 'bash'], { encoding: 'utf8' });
    assert.equal(gen.status, 0, gen.stderr);
    const file = path.join(dir, 'pulse.bash');
    writeFileSync(file, gen.stdout);
    // A pulse that does nothing, so Enter runs only what the completed line holds.
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'pulse'), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(bin, 'pulse'), 0o755);
    const cwd = path.join(dir, 'shell');
    mkdirSync(cwd);
    writeFileSync(path.join(cwd, 'nodes;touch PWNED;.json'), '{}\n');
    assert.equal(spawnSync('script', ['--version']).status, 0, 'script(1) (util-linux) gives bash a terminal');
    const keys = `source '${file}'\npulse --nodes nod\t\nprintf 'LINE-DONE\\n'\nexit\n`;
    const r = spawnSync('script', ['-qec', 'bash --norc --noprofile -i', '/dev/null'], {
      input: keys, encoding: 'utf8', cwd, timeout: 30_000,
      env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, PS1: '$ ', TERM: 'dumb' },
    });
    assert.match(r.stdout, /LINE-DONE/, `the interactive bash ran the keys\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /pulse --nodes nodes(\\;|';)/, `the name was completed, quoted\n${r.stdout}`);
    assert.equal(existsSync(path.join(cwd, 'PWNED')), false, `a completed file name ran as code at Enter\n${r.stdout}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
