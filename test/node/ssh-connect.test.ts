import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodePool, openSession } from '../../runtime/node/connect.js';
import { PulseError } from '../../runtime/errors.js';
import { sampleMemory } from '../../runtime/steps/index.js';
import { harness } from './helpers.js';
import { until } from '../helpers/until.js';
import type { Harness } from './helpers.js';
import type { NodeSession } from '../../runtime/node/types.js';
import type { SimNode } from '../sim/index.js';

let h: Harness;
const spark2 = { name: 'spark2', host: 'ssh' as const, ssh: 'spark2' };

before(async () => {
  h = await harness(['spark2', 'spark3']);
});
after(async () => {
  process.env.PULSE_SSH_CONFIG = h?.sim.sshConfigPath;
  await h?.stop();
});

/** Point PULSE_SSH_CONFIG at a config whose known_hosts is written with `opts`; extra lines go to every Host. */
function useKnownHosts(name: string, opts: Parameters<Harness['sim']['writeKnownHosts']>[1], extra = ''): string {
  const kh = join(h.tmp, `${name}.known_hosts`);
  const cfg = join(h.tmp, `${name}.config`);
  h.sim.writeKnownHosts(kh, opts);
  h.sim.writeSshConfig(cfg, kh);
  if (extra) writeFileSync(cfg, readFileSync(cfg, 'utf8').replace(/StrictHostKeyChecking yes/g, extra));
  process.env.PULSE_SSH_CONFIG = cfg;
  return kh;
}

const refused = (pattern: RegExp) => (e: unknown): boolean => {
  assert.ok(e instanceof PulseError, String(e));
  assert.equal(e.kind, 'unreachable');
  assert.match(e.message, pattern);
  return true;
};

test('an unknown host key is refused with the file and the fingerprint', async () => {
  const kh = useKnownHosts('unknown', { omit: ['spark2'] });
  await assert.rejects(openSession(spark2), refused(new RegExp(`unknown host key for \\[127\\.0\\.0\\.\\d+\\]:\\d+: ssh-ed25519 SHA256:\\S+ is not in ${kh}`)));
});

test('a changed host key is refused, even with StrictHostKeyChecking no', async () => {
  const kh = useKnownHosts('changed', { wrongKey: { aliases: ['spark2'], key: h.sim.foreignHostKey } });
  await assert.rejects(openSession(spark2), refused(new RegExp(`HOST KEY CHANGED .*SHA256:\\S+.*${kh}:1`)));
  useKnownHosts('changed-no', { wrongKey: { aliases: ['spark2'], key: h.sim.foreignHostKey } }, 'StrictHostKeyChecking no');
  await assert.rejects(openSession(spark2), refused(/HOST KEY CHANGED/));
});

test('StrictHostKeyChecking no in the user config accepts a missing entry only', async () => {
  useKnownHosts('missing-no', { omit: ['spark2'] }, 'StrictHostKeyChecking no');
  const s = await openSession(spark2);
  await s.close();
});

test('hashed known_hosts entries verify', async () => {
  useKnownHosts('hashed', { hashed: true });
  const s = await openSession(spark2);
  const m = await sampleMemory(s, 1);
  assert.ok(m.memAvailableGiB > 1);
  await s.close();
});

test('ProxyJump through one host works; two hops are refused clearly', async () => {
  process.env.PULSE_SSH_CONFIG = h.sim.sshConfigPath;
  const base = readFileSync(h.sim.sshConfigPath, 'utf8');
  const n3 = h.sim.node('spark3');
  const block = (alias: string, jump: string): string =>
    `Host ${alias}\n  HostName ${n3.address}\n  Port ${n3.sshPort}\n  User root\n  IdentityFile ${h.sim.identityPath}\n  UserKnownHostsFile ${h.sim.knownHostsPath}\n  StrictHostKeyChecking yes\n  ProxyJump ${jump}\n`;
  const cfg = join(h.tmp, 'jump.config');
  writeFileSync(cfg, `${block('via-jump', 'spark2')}\n${block('two-hops', 'spark2,spark3')}\n${base}`);
  process.env.PULSE_SSH_CONFIG = cfg;
  const s = await openSession({ name: 'spark3', host: 'ssh', ssh: 'via-jump' });
  assert.ok((await sampleMemory(s, 1)).memAvailableGiB > 1);
  await s.close();
  await assert.rejects(openSession({ name: 'spark3', host: 'ssh', ssh: 'two-hops' }), (e: unknown) => e instanceof PulseError && e.kind === 'config' && /more than one hop/.test(e.message));
  await h.sim.node('spark2').stopSshd(); // the jump host is down: spark3 is unreachable through it
  try {
    await assert.rejects(openSession({ name: 'spark3', host: 'ssh', ssh: 'via-jump' }), (e: unknown) => e instanceof PulseError && e.kind === 'unreachable');
  } finally {
    await h.sim.node('spark2').startSshd();
    process.env.PULSE_SSH_CONFIG = h.sim.sshConfigPath;
  }
});

test('ssh-agent auth: a config without a usable IdentityFile logs in with the agent key', async () => {
  const sock = join(h.tmp, 'agent.sock');
  const agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
  const saved = process.env.SSH_AUTH_SOCK;
  try {
    for (let i = 0; i < 50 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 50));
    execFileSync('ssh-add', ['-q', h.sim.identityPath], { env: { ...process.env, SSH_AUTH_SOCK: sock }, stdio: 'ignore' });
    const cfg = join(h.tmp, 'agent.config');
    writeFileSync(cfg, readFileSync(h.sim.sshConfigPath, 'utf8').replaceAll(h.sim.identityPath, join(h.tmp, 'no-such-key')).replace(/IdentitiesOnly yes/g, 'IdentitiesOnly no'));
    process.env.PULSE_SSH_CONFIG = cfg;
    process.env.SSH_AUTH_SOCK = sock;
    const s = await openSession(spark2);
    assert.ok((await sampleMemory(s, 1)).memAvailableGiB > 1);
    await s.close();
    delete process.env.SSH_AUTH_SOCK; // without the agent the same config cannot log in
    await assert.rejects(openSession(spark2), refused(/no ssh-agent .* no readable unencrypted IdentityFile/));
  } finally {
    if (saved === undefined) delete process.env.SSH_AUTH_SOCK;
    else process.env.SSH_AUTH_SOCK = saved;
    process.env.PULSE_SSH_CONFIG = h.sim.sshConfigPath;
    agent.kill();
  }
});

test('NodePool keeps one connection per node, reconnects after a drop, closes idle ones', async () => {
  process.env.PULSE_SSH_CONFIG = h.sim.sshConfigPath;
  const pool = new NodePool({ idleMs: 2000 }); // longer than the gap between two steps on a loaded machine; the close is awaited below
  try {
    const s2 = pool.session(spark2);
    const s3 = pool.session({ name: 'spark3', host: 'ssh', ssh: 'spark3' });
    await Promise.all([sampleMemory(s2, 1), sampleMemory(s3, 1), sampleMemory(s2, 1)]);
    for (let i = 0; i < 3; i++) await sampleMemory(s2, 1);
    assert.equal(pool.connectionsOpened, 2, 'one connection per node for all steps');

    h.sim.node('spark2').killSshSessions(); // a dropped link
    let ok = false;
    for (let i = 0; i < 20 && !ok; i++) {
      try {
        await sampleMemory(s2, 1);
        ok = true;
      } catch (e) {
        assert.ok(e instanceof PulseError && e.kind === 'unreachable', String(e)); // retryable, as activities expect
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.ok(ok);
    assert.equal(pool.connectionsOpened, 3, 'a new connection after the drop');

    await until('idle connections are closed', () => pool.liveConnections === 0, 10_000, { everyMs: 25 });
  } finally {
    await pool.closeAll();
  }
});

test('a link dropped while a script runs is unreachable (retryable), naming the node', async () => {
  process.env.PULSE_SSH_CONFIG = h.sim.sshConfigPath;
  const node = h.sim.node('spark3');
  const s = await openSession({ name: 'spark3', host: 'ssh', ssh: 'spark3' });
  node.setStopMode('hang');
  try {
    let started = false;
    const run = s.run('stop', { env: { PULSE_RECIPE_DIR: node.recipeDir, PULSE_RECIPE_STOP: 'stop.sh', PULSE_RECIPE_START: 'start.sh', PULSE_CONTAINER: node.containerName }, onRecord: (r) => (started ||= r.kind === 'pgid') });
    for (let i = 0; i < 100 && !started; i++) await new Promise((r) => setTimeout(r, 50));
    node.killSshSessions();
    await assert.rejects(run, (e: unknown) => e instanceof PulseError && e.kind === 'unreachable' && /spark3: the ssh link dropped/.test(e.message));
  } finally {
    node.setStopMode('ok');
    await s.close();
  }
});

/** The `bash -s` shells the node's sshd runs now (their SSH_CONNECTION names the node's address and port). */
function nodeShells(node: { address: string; sshPort: number }): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== 'bash\0-s\0') continue;
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (env.some((v) => v.startsWith('SSH_CONNECTION=') && v.endsWith(` ${node.address} ${node.sshPort}`))) out.push(Number(pid));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

// issue 28's user-view figures: each step waited 16-26 ms for its exec channel (sshd's fork, the login shell, bash).
test('the worker\'s warm pool keeps one bash -s started ahead: the next step takes it, closeAll ends it', async () => {
  await withSpare(async () => undefined);
});

// No wait between the kill and the step: the pool has not seen the spare's channel close yet (sshd has not even
// reaped the shell), the very case a wait for the close would remove.
test('a spare that died just now, its close not yet seen by the pool: the step runs at the first try all the same', async () => {
  await withSpare(async (s2, node, pool) => {
    for (const pid of nodeShells(node)) process.kill(pid, 'SIGKILL'); // the spare dies (an admin, the OOM killer)
    await assert.doesNotReject(sampleMemory(s2, 1), 'the step runs in a new shell, at the first try');
    assert.equal(pool.connectionsOpened, 1, 'on the same connection');
  });
});

/** A warm pool on spark2 whose spare has taken one step and whose next spare waits; `then` runs; closeAll ends it. */
async function withSpare(then: (s2: NodeSession, node: SimNode, pool: NodePool) => Promise<void>): Promise<void> {
  process.env.PULSE_SSH_CONFIG = h.sim.sshConfigPath;
  const node = h.sim.node('spark2');
  const pool = new NodePool({ warm: true });
  try {
    const s2 = pool.session(spark2);
    await sampleMemory(s2, 1);
    await until('one spare shell waits on the node', () => nodeShells(node).length === 1, 5000, { everyMs: 25 });
    const [spare] = nodeShells(node);
    await sampleMemory(s2, 1); // runs in the spare; the next one starts
    await until('the spare took the step and a new one waits', () => nodeShells(node).length === 1 && nodeShells(node)[0] !== spare, 5000, { everyMs: 25 });
    await then(s2, node, pool);
  } finally {
    await pool.closeAll();
  }
  await until('no shell is left on the node after closeAll', () => nodeShells(node).length === 0, 5000, { everyMs: 25 });
}
