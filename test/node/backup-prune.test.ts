/**
 * Backup pruning by write-env (issue 14 item 3): after a write, the newest PULSE_KEEP_BACKUPS backups stay, older
 * ones go, and the one last known good points to (PULSE_KEEP_BACKUP) stays whatever its age. 0 keeps them all.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseRecords } from '../../runtime/node/records.js';
import { scriptText } from '../../runtime/node/script.js';
import { REPO_ROOT } from '../helpers/paths.js';

function writeEnv(dir: string, stamp: string, keep: string, protect: string) {
  const body = `STAMP="${stamp}"\n`;
  const sha = createHash('sha256').update(body).digest('hex');
  const text = `# pulse-profile: best\n# pulse-node: n\n# pulse-recipe: r\n# pulse-overlay: none\n# pulse-rendered: 2026-12-03T08:00:00Z\n# pulse-sha256: ${sha}\n${body}`;
  const inputs = {
    PULSE_ENV_PATH: join(dir, '.env'), PULSE_NEW_ENV_B64: Buffer.from(text).toString('base64'), PULSE_NEW_SHA256: sha,
    PULSE_NEW_PROFILE: 'best', PULSE_NEW_OVERLAY: 'none', PULSE_STAMP: stamp, PULSE_KEEP_BACKUPS: keep, PULSE_KEEP_BACKUP: protect,
  };
  const r = spawnSync('bash', ['-s'], { input: scriptText('write-env', inputs), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return parseRecords(r.stdout).find((x) => x.kind === 'write-env');
}

const backups = (dir: string): string[] => readdirSync(dir).filter((f) => f.startsWith('.env.pulse-bak-')).sort();

function withDir(fn: (dir: string) => void): void {
  mkdirSync(join(REPO_ROOT, 'test-output'), { recursive: true });
  const dir = mkdtempSync(join(REPO_ROOT, 'test-output', 'backup-prune-'));
  try {
    writeFileSync(join(dir, '.env'), 'FIRST="1"\n');
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const stamp = (i: number): string => `20261203T08${String(i).padStart(2, '0')}00Z`;

test('write-env keeps the newest N backups and always the protected one', () => {
  withDir((dir) => {
    const protect = join(dir, `.env.pulse-bak-${stamp(1)}`);
    let pruned = 0;
    for (let i = 1; i <= 6; i++) pruned += Number(writeEnv(dir, stamp(i), '3', i > 1 ? protect : '')?.pruned);
    // Six writes, six backups: the newest three stay, and stamp 1 (protected); stamps 2 and 3 went.
    assert.deepEqual(backups(dir), [1, 4, 5, 6].map((i) => `.env.pulse-bak-${stamp(i)}`));
    assert.equal(pruned, 2);
  });
});

test('a -<n> backup of the same stamp counts as newer than its base; keep 0 prunes nothing', () => {
  withDir((dir) => {
    writeFileSync(join(dir, `.env.pulse-bak-${stamp(9)}`), 'OTHER="deploy"\n'); // another deploy's, same stamp
    writeFileSync(join(dir, `.env.pulse-bak-${stamp(1)}`), 'OLD="1"\n');
    const rec = writeEnv(dir, stamp(9), '0', '');
    assert.equal(rec?.backup, join(dir, `.env.pulse-bak-${stamp(9)}-1`));
    assert.equal(rec?.pruned, 0);
    assert.equal(backups(dir).length, 3);
    writeEnv(dir, stamp(10), '2', '');
    assert.deepEqual(backups(dir), [`.env.pulse-bak-${stamp(9)}-1`, `.env.pulse-bak-${stamp(10)}`]);
  });
});
