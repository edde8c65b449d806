/**
 * The worker's ssh links follow the files that chose them. One worker process keeps one pooled link per node across
 * deploys (idle links close after 5 minutes); between two deploys on that worker the operator edits the ssh config,
 * nodes.json or known_hosts. The next deploy must run on the host, user, key and host-key verdict the files give
 * then (SECURITY.md §2 and §6), never on the link the old files chose: each case is told apart by which node's Docker
 * engine the deploy touched (the sim's nodes share a file system, not an engine).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { CONTAINER_NAME } from '../sim/index.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { until } from '../helpers/until.js';

let stack: Stack;

before(async () => {
  stack = await startStack({ nodes: ['spark1', 'spark2', 'spark3'], protected: ['spark1'] });
});
after(async () => {
  await stack?.stop();
});

/** The ID of the node's vLLM container on its own Docker engine ('' when none). */
function containerOn(node: string): string {
  try {
    return stack.sim.node(node).docker('inspect', '-f', '{{.Id}}', CONTAINER_NAME).trim();
  } catch {
    return '';
  }
}

async function up(node: string, restart = true): Promise<void> {
  const o = await stack.outcome(await stack.start(stack.planUp(node, 'best', { restart })));
  assert.equal(o.status, 'succeeded', `up on ${node}: ${o.error ?? ''}\n${stack.workers[0]?.log().slice(-3000) ?? ''}`);
}

/** Rewrites a file for the duration of `body`, then puts the old bytes back. */
async function edited(file: string, edit: (text: string) => string, body: () => Promise<void>): Promise<void> {
  const old = readFileSync(file, 'utf8');
  writeFileSync(file, edit(old));
  try {
    await body();
  } finally {
    writeFileSync(file, old);
  }
}

test('one worker: both nodes served, so each has a live pooled link', async () => {
  await up('spark2', false);
  await up('spark3', false);
  assert.notEqual(containerOn('spark2'), '');
  assert.notEqual(containerOn('spark3'), '');
});

test('ssh config: the alias spark2 now names spark3\'s address; the next step runs there, not on the old link', async () => {
  // The sim's nodes share one loopback: spark2's server must stop first, or its port would refuse the start there.
  const o = await stack.outcome(await stack.start(stack.planDown('spark2')));
  assert.equal(o.status, 'succeeded', o.error ?? '');
  const three = containerOn('spark3');
  const cfg = stack.sim.sshConfigPath;
  const s3 = /Host spark3\n {2}HostName (\S+)\n {2}Port (\d+)/.exec(readFileSync(cfg, 'utf8'));
  assert.ok(s3, 'the sim writes one Host block per node');
  await edited(cfg, (t) => t.replace(/(Host spark2\n {2}HostName )\S+(\n {2}Port )\d+/, `$1${s3[1]}$2${s3[2]}`), () => up('spark2'));
  assert.equal(containerOn('spark2'), '', 'spark2\'s engine untouched: the link the old config chose was not used');
  assert.notEqual(containerOn('spark3'), three, 'the up ran where the ssh config pointed');
});

test('nodes.json: spark2 now reaches spark3; an up --restart of spark2 restarts spark3\'s server, never the old host\'s', async () => {
  const [two, three] = [containerOn('spark2'), containerOn('spark3')];
  const file = stack.nodesFile;
  await edited(file, (t) => {
    const j = JSON.parse(t) as { nodes: Record<string, unknown> };
    j.nodes['spark2'] = j.nodes['spark3'];
    return JSON.stringify(j, null, 2);
  }, () => up('spark2'));
  assert.equal(containerOn('spark2'), two, 'the old host kept its server');
  assert.notEqual(containerOn('spark3'), three, 'the host nodes.json names now was restarted');
});

test('known_hosts: spark3\'s key marked @revoked; the next deploy never runs a script on the live link', async () => {
  const three = containerOn('spark3');
  const file = stack.sim.knownHostsPath;
  const line = readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith(`[${stack.sim.node('spark3').address}]`));
  assert.ok(line, 'the sim writes one known_hosts line per node');
  let handle: Awaited<ReturnType<Stack['start']>> | null = null;
  try {
    await edited(file, (t) => `${t}@revoked ${line}\n`, async () => {
      const h = (handle = await stack.start(stack.planUp('spark3', 'best', { restart: true })));
      let why = '';
      await until('a step attempt refused by the @revoked line', async () => {
        const d = await h.describe();
        why = d.raw.pendingActivities?.map((a) => a.lastFailure?.message ?? '').find((m) => /revoked/.test(m)) ?? '';
        return why !== '';
      }, 60_000, { detail: () => stack.workers[0]?.log().slice(-3000) ?? '' });
      assert.match(why, /host key SHA256:\S+ of \S+ is marked @revoked/);
      assert.equal(containerOn('spark3'), three, 'no step ran: the server was not stopped or started');
    });
  } finally {
    // With the line gone again, the cancelled deploy's compensation reaches the node and releases its lock at once.
    await (handle as Awaited<ReturnType<Stack['start']>> | null)?.cancel().catch(() => undefined);
    if (handle) await stack.outcome(handle).catch(() => undefined);
  }
  await up('spark3');
  assert.notEqual(containerOn('spark3'), three, 'with the line gone the node is reached again');
});

test('mid-deploy, the ssh config moves spark2 to spark3\'s host: the next step checks the lock there, finds none of this deploy\'s and stops', async () => {
  const three = containerOn('spark3');
  stack.sim.node('spark2').setReadyDelay(20_000);
  const cfg = stack.sim.sshConfigPath;
  const s3 = /Host spark3\n {2}HostName (\S+)\n {2}Port (\d+)/.exec(readFileSync(cfg, 'utf8'));
  assert.ok(s3);
  const handle = await stack.start(stack.planUp('spark2', 'best', { restart: true }));
  try {
    await until('the readiness wait on spark2', async () => (await handle.describe()).raw.pendingActivities?.some((a) => a.activityType?.name === 'pollReadiness') ?? false, 60_000);
    let o: Awaited<ReturnType<Stack['outcome']>> | null = null;
    // Within the lock's half lease of its last renewal: the keeper would skip its check for a link it already knew.
    await edited(cfg, (t) => t.replace(/(Host spark2\n {2}HostName )\S+(\n {2}Port )\d+/, `$1${s3[1]}$2${s3[2]}`), async () => {
      o = await stack.outcome(handle);
    });
    const out = o as unknown as Awaited<ReturnType<Stack['outcome']>>;
    assert.notEqual(out.status, 'succeeded', 'no step may run on a host whose lock this deploy never took');
    // The keeper's check renewed over the new link and the node there holds no lock of this deploy.
    // (gone, or held and released there by an earlier deploy of spark2's that ran on that host: either way not ours)
    assert.match(out.result?.error ?? out.error ?? '', /step lock: refused by a safety rule on the node: this deploy('s lock is gone| lost its lock)/, JSON.stringify(out));
    assert.equal(containerOn('spark3'), three, 'spark3\'s server untouched');
  } finally {
    stack.sim.node('spark2').setReadyDelay(300);
    await handle.cancel().catch(() => undefined);
  }
});
