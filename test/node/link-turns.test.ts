/**
 * The worker's pool judges a node's link by its files before each step, one acquire of a node at a time
 * (runtime/node/connect.ts). Against real sshds of the simulator: steps that wait together for a node that does not
 * answer are not made to wait one connect timeout each, and links retired while the files flip under concurrent
 * steps are all closed once their steps end (none leaks, none is closed under a running step).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { NodePool, openTransport } from '../../runtime/node/connect.js';
import { PulseError } from '../../runtime/errors.js';
import { sampleMemory } from '../../runtime/steps/index.js';
import { until } from '../helpers/until.js';
import { harness, type Harness } from './helpers.js';

let h: Harness;
const spark2 = { name: 'spark2', host: 'ssh' as const, ssh: 'spark2' };

before(async () => {
  h = await harness(['spark2']);
});
after(async () => {
  h?.sim.node('spark2').freezeSshd(false);
  await h?.stop();
});

/** A copy of the sim's ssh config with `edit` applied, made PULSE_SSH_CONFIG. */
function useConfig(name: string, edit: (text: string) => string): string {
  const cfg = join(h.tmp, `${name}.config`);
  writeFileSync(cfg, edit(readFileSync(h.sim.sshConfigPath, 'utf8')));
  process.env.PULSE_SSH_CONFIG = cfg;
  return cfg;
}

/** Established TCP connections of this process to spark2's sshd. */
function linksToSpark2(): number {
  const n = h.sim.node('spark2');
  const out = execFileSync('ss', ['-Htnp', 'state', 'established', 'dst', `${n.address}:${n.sshPort}`], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes(`pid=${process.pid},`)).length;
}

test('steps waiting together for a node that does not answer share one connect and its failure, not one each', async () => {
  useConfig('dark', (t) => t.replace(/(Host spark2\n)/, '$1  ConnectTimeout 2\n'));
  let connects = 0;
  const pool = new NodePool({
    open: (t) => {
      connects += 1;
      return openTransport(t);
    },
  });
  const node = h.sim.node('spark2');
  node.freezeSshd(true);
  try {
    const s = pool.session(spark2);
    const all = await Promise.allSettled([1, 2, 3, 4].map(() => sampleMemory(s, 1)));
    for (const r of all) {
      assert.equal(r.status, 'rejected');
      assert.ok(r.reason instanceof PulseError && r.reason.kind === 'unreachable', String(r.reason));
    }
    // One connect (a 2 s handshake timeout) for the four: one each, in turn, would make them wait 8 s.
    assert.equal(connects, 1, `4 concurrent steps on a dark node made ${connects} connects`);
  } finally {
    node.freezeSshd(false);
    await pool.closeAll();
  }
});

test('links retired while the ssh config flips under concurrent steps all close once their steps end', async () => {
  // Two configs that reach the same host but differ in what drift compares (a second, identical known_hosts file).
  const kh2 = join(h.tmp, 'second.known_hosts');
  copyFileSync(h.sim.knownHostsPath, kh2);
  const a = useConfig('flip-a', (t) => t);
  const b = useConfig('flip-b', (t) => t.replace(/(UserKnownHostsFile \S+)/g, `$1 ${kh2}`));
  const pool = new NodePool();
  try {
    const s = pool.session(spark2);
    for (let i = 0; i < 8; i++) {
      process.env.PULSE_SSH_CONFIG = i % 2 === 0 ? a : b;
      const runs = [1, 2, 3].map(() => sampleMemory(s, 1));
      process.env.PULSE_SSH_CONFIG = i % 2 === 0 ? b : a; // the file changes while the steps are judged and run
      await Promise.all(runs); // none closed under it
    }
    assert.ok(pool.connectionsOpened > 2, `the flips replaced the link (${pool.connectionsOpened} opened)`);
    await until('only the pooled link left open', () => linksToSpark2() === 1, 10_000, { detail: () => `${linksToSpark2()} links open, ${pool.liveConnections} pooled` });
  } finally {
    await pool.closeAll();
    process.env.PULSE_SSH_CONFIG = h.sim.sshConfigPath;
  }
});

test('the identity file is replaced by another key: the next step does not run on the link the old key opened', async () => {
  const key = join(h.tmp, 'rotated-id');
  copyFileSync(h.sim.identityPath, key);
  chmodSync(key, 0o600);
  useConfig('rotated', (t) => t.replaceAll(h.sim.identityPath, key));
  const pool = new NodePool();
  try {
    const s = pool.session(spark2);
    await sampleMemory(s, 1); // the link, opened with the node's authorized key
    // The same path now holds a key the node does not know: a link opened now could not log in.
    rmSync(key);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    await assert.rejects(sampleMemory(s, 1), (e: unknown) => e instanceof PulseError && e.kind === 'unreachable', 'the step ran on the link the old key opened');
    assert.equal(pool.liveConnections, 0, 'the old link was judged by the new bytes and retired; no new one could log in');
  } finally {
    await pool.closeAll();
    process.env.PULSE_SSH_CONFIG = h.sim.sshConfigPath;
  }
});
