/**
 * Every command's --help fits an 80-column terminal: no line, example or footer longer than 80 columns (they wrapped,
 * the footer under every help by one column). The commands are found by walking the help itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI } from '../helpers/cli.js';

function help(path: string[]): string {
  const r = spawnSync(process.execPath, [CLI, ...path, '--help'], { encoding: 'utf8', env: { ...process.env, COLUMNS: '80' } });
  assert.equal(r.status, 0, `${path.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** The subcommands a help lists under "Commands:" (commander's own `help` left out). */
function commandsOf(text: string): string[] {
  const at = text.indexOf('\nCommands:\n');
  if (at < 0) return [];
  const block = text.slice(at + 11).split('\n\n')[0] ?? '';
  return block.split('\n').map((l) => /^ {2}([a-z][a-z-]*)/.exec(l)?.[1]).filter((c): c is string => c !== undefined && c !== 'help');
}

test('every --help fits 80 columns', () => {
  const queue: string[][] = [[]];
  const seen: string[] = [];
  const long: string[] = [];
  while (queue.length > 0) {
    const path = queue.shift()!;
    const text = help(path);
    seen.push(path.join(' ') || 'pulse');
    for (const l of text.split('\n')) if (Array.from(l).length > 80) long.push(`${path.join(' ') || 'pulse'} (${Array.from(l).length}): ${l}`);
    for (const c of commandsOf(text)) queue.push([...path, c]);
  }
  assert.ok(seen.includes('model up') && seen.includes('server stop'), `walked: ${seen.join(', ')}`);
  assert.deepEqual(long, []);
});
