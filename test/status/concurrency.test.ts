import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fragmentPath } from '../../runtime/gateway/gateway.js';
import { readAllNodeStates, writeNodeState } from '../../runtime/state/state.js';
import { publishFragment } from '../../runtime/gateway/gateway.js';
import { fleetEntry, nodeState, tempDir } from './fixtures.js';

const writer = path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'state-writer.js');

function runWriter(args: string[], script = writer): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

/** Parse every state file and the fragment; they must always be valid JSON, whatever the writers are doing. */
function readEverything(stateDir: string): number {
  let files = 0;
  const nodesDir = path.join(stateDir, 'nodes');
  let names: string[] = [];
  try {
    names = readdirSync(nodesDir).filter((n) => n.endsWith('.json'));
  } catch {
    /* not created yet */
  }
  for (const name of names) {
    try {
      JSON.parse(readFileSync(path.join(nodesDir, name), 'utf8'));
      files++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  try {
    JSON.parse(readFileSync(fragmentPath(stateDir), 'utf8'));
    files++;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return files;
}

test('8 processes writing node states and the fragment at once: never invalid JSON, no lost update', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const nodes = Array.from({ length: 8 }, (_, i) => `node${i}`);
    const fleet = nodes.map((n) => fleetEntry(n));
    // Even counts end 'up', odd counts end 'failed': the final fragment is known in advance.
    const counts = nodes.map((_, i) => 20 + (i % 2));
    let running = true;
    let reads = 0;
    const reader = (async () => {
      while (running) {
        reads += readEverything(dir);
        await new Promise((r) => setImmediate(r));
      }
    })();
    const codes = await Promise.all(nodes.map((n, i) => runWriter([dir, n, String(counts[i]), JSON.stringify(fleet)])));
    running = false;
    await reader;
    assert.deepEqual(codes, nodes.map(() => 0));
    assert.ok(reads > 0, 'the reader parsed files while the writers ran');

    const states = await readAllNodeStates(dir);
    for (const [i, n] of nodes.entries()) assert.equal(states[n]?.runId, String(counts[i]), `${n}: last write kept`);
    const fragment = JSON.parse(readFileSync(fragmentPath(dir), 'utf8'));
    const enabled = fragment.models[0].endpoints.map((e: { name: string; enabled: boolean }) => [e.name, e.enabled]);
    assert.deepEqual(enabled, nodes.map((n, i) => [n, counts[i]! % 2 === 0]), 'the fragment reflects every final state');
    assert.deepEqual(readdirSync(dir).sort(), ['gateway-backends.json', 'nodes'], 'no lock or temp file is left');
  } finally {
    cleanup();
  }
});

test('a publisher holding an old view of the states cannot overwrite a newer state (the lock serialises them)', async () => {
  const { dir, cleanup } = tempDir();
  const signals = tempDir('pulse-signals-');
  try {
    const fleet = [fleetEntry('spark1'), fleetEntry('spark2')];
    await writeNodeState(dir, nodeState('spark2'));
    const inside = path.join(signals.dir, 'inside');
    const go = path.join(signals.dir, 'go');
    const slow = runWriter([dir, JSON.stringify(fleet), inside, go], path.join(path.dirname(writer), 'slow-publisher.js'));
    while (!existsSync(inside)) await new Promise((r) => setTimeout(r, 5));
    // The slow publisher has read "spark2 up" and is paused. Mark spark2 failed and publish meanwhile.
    const update = writeNodeState(dir, nodeState('spark2', { state: 'failed', error: 'x' })).then(() => publishFragment(dir, fleet));
    // With the lock the update waits for the slow publisher; without it, it would finish first and be overwritten.
    await Promise.race([update, new Promise((r) => setTimeout(r, 300))]);
    writeFileSync(go, '');
    assert.equal(await slow, 0);
    await update;
    const fragment = JSON.parse(readFileSync(fragmentPath(dir), 'utf8'));
    assert.equal(fragment.models[0].endpoints[1].enabled, false, 'the newer failed state wins');
  } finally {
    signals.cleanup();
    cleanup();
  }
});
