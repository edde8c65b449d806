/**
 * Owner-only files where secrets may be: a real up through a `pulse worker` started with umask 000 (the most
 * permissive), on a simulated node whose .env holds API_KEY/HF_TOKEN and is world-readable before the deploy.
 * Afterwards the state dir is 0700 and every state file 0600 (node states, gateway file), and on the node the new
 * .env, its backup and the start log pulse created are 0600.
 */
import assert from 'node:assert/strict';
import { readdirSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;

before(async () => {
  stack = await startStack({ nodes: ['simA'], readyDelayMs: 200, worker: false });
  // The worker runs with umask 000, so only explicit modes can make files private.
  await stack.startWorker({}, { umask: '000' });
  const env = stack.sim.node('simA').envPath;
  writeFileSync(env, 'MAX_NUM_SEQS=2\nAPI_KEY=sk-perm-secret\nHF_TOKEN=hf_perm_secret\n');
  chmodSync(env, 0o644);
});
after(async () => {
  await stack?.stop();
});

function mode(p: string): string {
  return (statSync(p).mode & 0o777).toString(8).padStart(4, '0');
}

test('after a real up: state dir 0700, every state file 0600', async () => {
  const out = await stack.outcome(await stack.start(stack.planUp('simA')));
  assert.equal(out.status, 'succeeded', out.error ?? '');
  assert.equal(mode(stack.stateDir), '0700');
  assert.equal(mode(path.join(stack.stateDir, 'nodes')), '0700');
  const files = [...(await stack.stateFiles()).keys()];
  assert.ok(files.includes('gateway-backends.json') && files.includes('nodes/simA.json'), files.join(', '));
  for (const f of files) assert.equal(mode(path.join(stack.stateDir, f)), '0600', f);
});

test('on the node: the new .env, its backup and the start log are 0600 (the old .env was 0644)', () => {
  const node = stack.sim.node('simA');
  assert.equal(mode(node.envPath), '0600', '.env');
  const backups = readdirSync(node.recipeDir).filter((f) => f.startsWith('.env.pulse-bak-'));
  assert.equal(backups.length, 1, backups.join(', '));
  assert.equal(mode(path.join(node.recipeDir, backups[0] ?? '')), '0600', 'backup');
  const logs = readdirSync(path.join(node.recipeDir, 'logs')).filter((f) => f.startsWith('pulse-up-'));
  assert.equal(logs.length, 1, logs.join(', '));
  assert.equal(mode(path.join(node.recipeDir, 'logs', logs[0] ?? '')), '0600', 'start log (start.sh output may name the key)');
});
