/** `pulse model --help` lists every verb the program has (read from the program, so a new verb is checked too). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';
import { buildProgram } from '../../cli/program.js';

test('pulse-cli model --help lists every verb of the program in its command list', () => {
  const out = execFileSync(process.execPath, [path.join(REPO_ROOT, 'bin/pulse-cli'), 'model', '--help'], { encoding: 'utf8' });
  // The command list only: a verb named in the description or the examples does not count.
  const list = /^Commands:\n((?: {2}.*\n)+)/m.exec(out)?.[1] ?? '';
  const listed = list.split('\n').flatMap((l) => /^ {2}(\S+)/.exec(l)?.[1] ?? []);
  const model = buildProgram(() => undefined).commands.find((c) => c.name() === 'model');
  const verbs = model?.commands.map((c) => c.name()) ?? [];
  assert.ok(verbs.length >= 13, `the program's model verbs: ${verbs.join(', ')}`);
  assert.deepEqual(listed, [...verbs, 'help'], out);
});
