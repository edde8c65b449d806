/**
 * A backup name that already exists with other content (another deploy's, under a reused or forged render time)
 * is never taken as this deploy's backup: write-env keeps the old .env byte for byte under a free name and reports
 * that name (found by the issue 10 red team: the old .env was replaced with no copy anywhere).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseRecords } from '../../runtime/node/records.js';
import { scriptText } from '../../runtime/node/script.js';
import { REPO_ROOT } from '../helpers/paths.js';

test('write-env never takes another deploy\'s backup of the same stamp for its own', () => {
  mkdirSync(join(REPO_ROOT, 'test-output'), { recursive: true });
  const dir = mkdtempSync(join(REPO_ROOT, 'test-output', 'backup-stamp-'));
  try {
    const envPath = join(dir, '.env');
    const old = 'OPERATOR_HAND_EDIT="precious"\n';
    writeFileSync(envPath, old);
    writeFileSync(join(dir, '.env.pulse-bak-20261202T120000Z'), 'OLDER_DEPLOY_BACKUP="1"\n');
    const body = 'MAX_NUM_SEQS="4"\n';
    const sha = createHash('sha256').update(body).digest('hex');
    const text = `# pulse-profile: best\n# pulse-node: n\n# pulse-recipe: r\n# pulse-overlay: none\n# pulse-rendered: 2026-12-02T12:00:00Z\n# pulse-sha256: ${sha}\n${body}`;
    const inputs = { PULSE_ENV_PATH: envPath, PULSE_NEW_ENV_B64: Buffer.from(text).toString('base64'), PULSE_NEW_SHA256: sha, PULSE_NEW_PROFILE: 'best', PULSE_NEW_OVERLAY: 'none', PULSE_STAMP: '20261202T120000Z' };
    const r = spawnSync('bash', ['-s'], { input: scriptText('write-env', inputs), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const rec = parseRecords(r.stdout).find((x) => x.kind === 'write-env');
    assert.equal(rec?.written, true);
    const backup = String(rec?.backup);
    assert.notEqual(backup, join(dir, '.env.pulse-bak-20261202T120000Z'), 'the other deploy\'s backup is not reported as ours');
    assert.equal(readFileSync(backup, 'utf8'), old, 'the reported backup is the old .env byte for byte');
    assert.equal(readFileSync(join(dir, '.env.pulse-bak-20261202T120000Z'), 'utf8'), 'OLDER_DEPLOY_BACKUP="1"\n', 'the other backup is untouched');
    assert.equal(readdirSync(dir).filter((f) => f.startsWith('.env.pulse-bak-')).length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
