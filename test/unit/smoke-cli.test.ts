import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';

test('pulse-cli model --help lists every verb', () => {
  const out = execFileSync(process.execPath, [path.join(REPO_ROOT, 'bin/pulse-cli'), 'model', '--help'], { encoding: 'utf8' });
  for (const verb of ['profiles', 'up', 'down', 'status', 'smoke', 'fragment', 'watch', 'cancel', 'history']) {
    assert.match(out, new RegExp(`\\b${verb}\\b`));
  }
});
