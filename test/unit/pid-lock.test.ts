/**
 * The pid lock file (runtime/state/pid.ts tryPidLock), the start lock of the embedded server and of its background worker:
 * one holder at a time, the lock always holds its holder's pid, and a lock whose holder died (or that holds no pid)
 * is taken over in the same try.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tryPidLock } from '../../runtime/state/pid.js';
import { removeDir, tempDir } from '../helpers/cli.js';

test('a pid lock: taken with our pid in it, refused while held (the holder named), free again after release', async () => {
  const dir = await tempDir('pulse-pid-lock-');
  try {
    const file = path.join(dir, 'worker.lock');
    const first = await tryPidLock(file);
    assert.ok('release' in first);
    assert.equal(await readFile(file, 'utf8'), String(process.pid));
    assert.deepEqual(await tryPidLock(file), { holder: process.pid }, 'a live holder (this process) keeps it');
    await first.release();
    assert.equal(existsSync(file), false);
    const again = await tryPidLock(file);
    assert.ok('release' in again);
    await again.release();
    assert.deepEqual(await readdir(dir), [], 'no temporary file is left beside the lock');
  } finally {
    await removeDir(dir);
  }
});

test('a pid lock held by another live process is refused; one whose holder died, or with no pid, is taken over', async () => {
  const dir = await tempDir('pulse-pid-lock-');
  try {
    const file = path.join(dir, 'server.lock');
    await writeFile(file, '1'); // pid 1 is alive for as long as the machine runs
    assert.deepEqual(await tryPidLock(file), { holder: 1 });
    assert.equal(await readFile(file, 'utf8'), '1', 'a live holder\'s lock is left alone');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    for (const stale of [dead, '', 'not a pid', '-4']) {
      await writeFile(file, stale);
      const got = await tryPidLock(file);
      assert.ok('release' in got, `a lock holding ${JSON.stringify(stale)} is taken over`);
      assert.equal(await readFile(file, 'utf8'), String(process.pid));
      await got.release();
    }
  } finally {
    await removeDir(dir);
  }
});
