/**
 * A forged or skewed node lock no longer blocks deploys forever (issue 27, item 8), through the CLI on a simulated
 * node: a lock file whose lease ends in the year 5138, and a lock a real deploy took just before the node's clock
 * jumped back an hour (a `date` on the node's PATH that answers `date +%s` an hour early, as the node's own clock
 * would). Each lease is further ahead than one lease plus slack: status shows it as corrupt (not held), and the next
 * up clears it, saying what it found (holder, until) and how it cleared it, and succeeds.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Sim } from '../sim/index.js';
import { runCli } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-forged-lock-', { nodes: ['simA'], readyDelayMs: 200 }));
});
after(() => stopSimCli(sim, dir));

/** The lock file of simA's recipe on the node (lock.sh: 24 hex of sha256 of the recipe dir). */
function lockFile(): string {
  const node = (sim as Sim).node('simA');
  const key = createHash('sha256').update(node.recipeDir).digest('hex').slice(0, 24);
  return path.join(node.paths.homeState, 'locks', `${key}.lock`);
}

function plantLock(fields: Record<string, string | number>): void {
  mkdirSync(path.dirname(lockFile()), { recursive: true });
  writeFileSync(lockFile(), Object.entries(fields).map(([k, v]) => `${k}=${v}\n`).join(''));
}

const nowS = (): number => Math.floor(Date.now() / 1000);

test('a lock whose lease ends in the year 5138: status calls it corrupt, and the next up clears it, naming the holder and the until', async () => {
  const node = (sim as Sim).node('simA');
  plantLock({ deploy: 'pulse-model-simA/forged-run', host: 'elsewhere', action: 'up', recipe: node.recipeDir, since: nowS(), until: 99_999_999_999, state: 'held' });
  const st = await runCli(['model', 'status', '--node', 'simA', '--json', '--no-http'], env);
  const lock = (JSON.parse(st.stdout) as { nodes: { lock: { live: boolean; corrupt?: string } | null }[] }).nodes[0]?.lock;
  assert.equal(lock?.live, false, st.stdout);
  assert.match(lock?.corrupt ?? '', /^corrupt lease: deploy pulse-model-simA\/forged-run from controller elsewhere \(up\) since \S+, lease until 5138-11-16T09:46:39Z, \d+ s ahead of this node's clock \(\S+\), more than one lease \(120 s\) plus 60 s: a forged lock file or a node clock that jumped back$/);
  const text = await runCli(['model', 'status', '--node', 'simA', '--no-http'], env);
  assert.match(text.stdout.replace(/\n\s+/g, ' '), /corrupt lease: deploy pulse-model-simA\/forged-run .* \(not honoured: the next deploy clears it\)/);

  const up = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(up.code, 0, up.stdout + up.stderr);
  assert.match(up.stdout.replace(/\n\s+/g, ' '), /node lock on simA .*corrupt lease: deploy pulse-model-simA\/forged-run from controller elsewhere \(up\) since \S+, lease until 5138-11-16T09:46:39Z, .*; treated as stale: this deploy replaced it with its own lock \(lease until \S+\)/);
  const after = readFileSync(lockFile(), 'utf8');
  assert.match(after, /^state=released$/m, 'the up released its own lock at the end');
  assert.doesNotMatch(after, /forged-run|99999999999/);
});

test('a node clock that jumped back an hour after a deploy renewed its lock: the lease is corrupt, not an hour-long block', async () => {
  const node = (sim as Sim).node('simA');
  // What lock.sh wrote for a live deploy one second ago (lease 120 s), by the clock before the jump.
  const t = nowS();
  plantLock({ deploy: 'pulse-model-simA/before-the-jump', host: 'ctl-b', action: 'down', recipe: node.recipeDir, since: t - 30, until: t + 119, state: 'held', lease: 120 });
  const shim = path.join(node.paths.binDir, 'date');
  writeFileSync(shim, '#!/bin/bash\n# The node\'s clock, an hour behind.\nif [[ $# -eq 1 && $1 == +%s ]]; then echo $(( $(/usr/bin/date +%s) - 3600 )); else exec /usr/bin/date "$@"; fi\n');
  chmodSync(shim, 0o755);
  try {
    const up = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
    assert.equal(up.code, 0, up.stdout + up.stderr);
    assert.match(up.stdout.replace(/\n\s+/g, ' '), /corrupt lease: deploy pulse-model-simA\/before-the-jump from controller ctl-b \(down\) since \S+, lease until \S+, 37\d\d s ahead of this node's clock \(\S+\), more than one lease \(120 s\) plus 60 s: a forged lock file or a node clock that jumped back; treated as stale/);
  } finally {
    rmSync(shim, { force: true });
  }
});

test('a lease that is only one lease ahead (a live deploy) is still honoured: the up is refused naming the holder', async () => {
  const node = (sim as Sim).node('simA');
  const t = nowS();
  plantLock({ deploy: 'pulse-model-simA/live-run', host: 'ctl-c', action: 'up', recipe: node.recipeDir, since: t, until: t + 120, state: 'held', lease: 120 });
  const up = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(up.code, 4, up.stdout + up.stderr);
  assert.match(up.stdout + up.stderr, /locked by deploy pulse-model-simA\/live-run from controller ctl-c \(up\)/);
  plantLock({ deploy: 'pulse-model-simA/live-run', host: 'ctl-c', action: 'up', recipe: node.recipeDir, since: t, until: t, state: 'released', lease: 120 });
});
