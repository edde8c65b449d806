import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import {
  defaultStateDir, nodeStatePath, readAllNodeStates, readNodeState, writeNodeState,
} from '../../runtime/state/state.js';
import { withStateLock } from '../../runtime/state/state-files.js';
import { isPulseError } from '../../runtime/errors.js';
import { nodeState, tempDir } from './fixtures.js';

test('defaultStateDir: PULSE_STATE_DIR, then absolute XDG_STATE_HOME, then ~/.local/state', () => {
  assert.equal(defaultStateDir({ PULSE_STATE_DIR: '/x/y', XDG_STATE_HOME: '/s', HOME: '/h' }), '/x/y');
  assert.equal(defaultStateDir({ XDG_STATE_HOME: '/s', HOME: '/h' }), '/s/pulse/runtime');
  assert.equal(defaultStateDir({ XDG_STATE_HOME: 'relative', HOME: '/h' }), '/h/.local/state/pulse/runtime');
  assert.equal(defaultStateDir({ HOME: '/h' }), '/h/.local/state/pulse/runtime');
});

test('writeNodeState writes 0600 files in 0700 dirs, readNodeState reads them back', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const stateDir = path.join(dir, 'state');
    const file = await writeNodeState(stateDir, nodeState('spark2', { state: 'failed', error: 'readiness timed out' }));
    assert.equal(file, path.join(stateDir, 'nodes', 'spark2.json'));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(stateDir).mode & 0o777, 0o700);
    assert.equal(statSync(path.join(stateDir, 'nodes')).mode & 0o777, 0o700);
    const back = await readNodeState(stateDir, 'spark2');
    assert.equal(back?.state, 'failed');
    assert.equal(back?.error, 'readiness timed out');
    assert.equal(await readNodeState(stateDir, 'spark9'), null);
    assert.deepEqual(readdirSync(stateDir).sort(), ['nodes'], 'no temp or lock file is left behind');
  } finally {
    cleanup();
  }
});

test('readAllNodeStates returns every node and ignores temp files', async () => {
  const { dir, cleanup } = tempDir();
  try {
    await writeNodeState(dir, nodeState('spark1'));
    await writeNodeState(dir, nodeState('spark2', { state: 'down', action: 'down' }));
    writeFileSync(path.join(dir, 'nodes', 'spark3.json.tmp-1-abcd'), '{"half');
    const all = await readAllNodeStates(dir);
    assert.deepEqual(Object.keys(all).sort(), ['spark1', 'spark2']);
    assert.equal(all['spark2']?.state, 'down');
    assert.deepEqual(await readAllNodeStates(path.join(dir, 'missing')), {});
  } finally {
    cleanup();
  }
});

test('no secret value is stored: API_KEY= and HF_TOKEN= values are redacted', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = await writeNodeState(dir, nodeState('spark2', { state: 'failed', error: 'start.sh said API_KEY=sk-live-123 HF_TOKEN=hf_abc' }));
    const text = readFileSync(file, 'utf8');
    assert.doesNotMatch(text, /sk-live-123|hf_abc/);
    assert.match(text, /API_KEY=<redacted>/);
  } finally {
    cleanup();
  }
});

test('bad node names and damaged state files are clear PulseErrors', async () => {
  const { dir, cleanup } = tempDir();
  try {
    assert.throws(() => nodeStatePath(dir, '../etc/passwd'), (e) => isPulseError(e) && e.kind === 'usage');
    mkdirSync(path.join(dir, 'nodes'), { recursive: true });
    writeFileSync(path.join(dir, 'nodes', 'spark1.json'), '{"node":');
    await assert.rejects(readNodeState(dir, 'spark1'), (e) => isPulseError(e) && /spark1\.json: not valid JSON/.test(e.message));
    writeFileSync(path.join(dir, 'nodes', 'spark1.json'), '{"node":"spark1","state":"sideways","action":"up","at":"x"}');
    await assert.rejects(readNodeState(dir, 'spark1'), (e) => isPulseError(e) && /state: expected one of/.test(e.message));
    await assert.rejects(writeNodeState(dir, { ...nodeState('spark1'), state: 'bogus' as never }), (e) => isPulseError(e));
  } finally {
    cleanup();
  }
});

test('a stale lock (dead pid) is broken; a live one is waited for', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const lock = path.join(dir, '.lock');
    writeFileSync(lock, JSON.stringify({ token: 'dead', pid: 2 ** 22 + 12345, host: (await import('node:os')).hostname(), at: Date.now() }));
    await writeNodeState(dir, nodeState('spark1'));
    assert.equal((await readNodeState(dir, 'spark1'))?.state, 'up');
    // A live holder: this process holds the lock while a second writer waits, then gets it.
    let second: Promise<string> | undefined;
    await withStateLock(dir, () => {
      second = writeNodeState(dir, nodeState('spark1', { state: 'down', action: 'down' }));
    });
    await second;
    assert.equal((await readNodeState(dir, 'spark1'))?.state, 'down');
  } finally {
    cleanup();
  }
});
