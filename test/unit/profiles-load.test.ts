/** Loading a profiles folder: sorted by name, a bad file fails with its file:line, names are checked, lookups refuse. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadProfiles, profileOf } from '../../runtime/config/profiles.js';
import { isPulseError } from '../../runtime/errors.js';
import { profilesDir } from '../../runtime/state/paths.js';

/** A render-only profile: the smallest that loads (a runnable one must set every recipe key). */
const DRAFT = '# pulse-recipe: r\n# pulse-runnable: false\n';

function withDir(files: Record<string, string>, fn: (dir: string) => void): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-profiles-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('loadProfiles: every *.env sorted by name; other files ignored', () => {
  withDir({ 'b.env': DRAFT, 'a.env': DRAFT, 'notes.txt': 'x' }, (dir) => {
    assert.deepEqual([...loadProfiles(dir).keys()], ['a', 'b']);
  });
});

test('loadProfiles: a broken profile fails the load with its file and line', () => {
  withDir({ 'ok.env': DRAFT, 'bad.env': '# pulse-recipe: r\nA=$x\n' }, (dir) => {
    assert.throws(() => loadProfiles(dir), (e: unknown) => isPulseError(e) && e.kind === 'config' && /bad\.env:2: A: the unquoted value contains "\$"/.test(e.message));
  });
});

test('loadProfiles: a file name outside letters, digits and _ . - is refused', () => {
  withDir({ 'my profile.env': DRAFT }, (dir) => {
    assert.throws(() => loadProfiles(dir), /a profile file name holds only letters/);
  });
});

test('loadProfiles: a missing folder is a config error', () => {
  assert.throws(() => loadProfiles('/nonexistent/pulse-profiles'), (e: unknown) => isPulseError(e) && e.kind === 'config' && /cannot list the profiles/.test(e.message));
});

test('profileOf: an unknown name refuses and lists the known ones', () => {
  withDir({ 'a.env': DRAFT }, (dir) => {
    assert.throws(() => profileOf(loadProfiles(dir), 'z'), (e: unknown) => isPulseError(e) && e.kind === 'config' && e.message === 'unknown profile "z"; known profiles: a');
  });
});

test('profilesDir: PULSE_PROFILES_DIR overrides the shipped folder', () => {
  assert.equal(profilesDir({ PULSE_PROFILES_DIR: '/x/y' }), '/x/y');
  assert.match(profilesDir({}), /runtime\/qwen38\/profiles$/);
});
