import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

test('pulse-cli model --help lists every verb', () => {
  const out = execFileSync(process.execPath, [path.join(root, 'bin/pulse-cli'), 'model', '--help'], { encoding: 'utf8' });
  for (const verb of ['profiles', 'up', 'down', 'status', 'smoke', 'fragment', 'watch', 'cancel', 'history']) {
    assert.match(out, new RegExp(`\\b${verb}\\b`));
  }
});
