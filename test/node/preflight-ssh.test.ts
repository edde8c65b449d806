import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';
import { openSession } from '../../runtime/node/connect.js';
import type { NodeSession } from '../../runtime/node/types.js';
import { PulseError } from '../../runtime/errors.js';
import { makeDirs, probeReadiness, runPreflight, sampleMemory, startServer, stepScripts, stopServer, verifyServer, writeEnv } from '../../runtime/steps/index.js';
import { PROFILE_IMAGE } from '../sim/index.js';
import { harness } from './helpers.js';
import type { Harness } from './helpers.js';
import { pollUntil } from '../helpers/until.js';

let h: Harness;
let s: NodeSession;

before(async () => {
  h = await harness(['spark2']);
  s = await openSession({ name: 'spark2', host: 'ssh', ssh: 'spark2' });
});
after(async () => {
  await s?.close();
  await h?.stop();
});

test('memory: one sample; a node whose memory never frees stays below the gate; the watermark factor is shown', async () => {
  const node = h.sim.node('spark2');
  node.setMemory({ pinnedAvailableGiB: 50 });
  node.setWatermark(300);
  const m = await sampleMemory(s, 100);
  assert.ok(Math.abs(m.memAvailableGiB - node.memAvailableGiB()) < 0.1, `${m.memAvailableGiB} vs ${node.memAvailableGiB()}`);
  assert.ok(m.memAvailableGiB < m.gateGiB);
  assert.equal(m.gateGiB, 100);
  assert.equal(m.watermarkScaleFactor, 300);
  node.setMemory({ pinnedAvailableGiB: null });
  node.setWatermark(10);
  assert.ok((await sampleMemory(s, 100)).memAvailableGiB >= 100);
});

test('preflight refuses another vLLM container and a missing image, reads the .env diff without values, writes nothing', async () => {
  const node = h.sim.node('spark2');
  const plan = h.plan('spark2', 'datagen');
  writeFileSync(node.envPath, `${plan.env.text.replace('MAX_NUM_SEQS="8"', 'MAX_NUM_SEQS="2"')}OLD_KEY=1\nAPI_KEY=sk-preflight-secret\n`);
  const before = readdirSync(node.recipeDir).sort();
  node.exec(`docker run -d --name vllm-other ${PROFILE_IMAGE} sleep 600 >/dev/null`);
  node.removeImage(PROFILE_IMAGE);
  try {
    const r = await runPreflight(s, plan);
    assert.equal(r.ok, false);
    assert.deepEqual(r.otherVllmContainers, ['vllm-other']);
    const failed = r.checks.filter((c) => !c.ok).map((c) => c.name).sort();
    assert.deepEqual(failed, ['image', 'no-other-vllm']);
    assert.deepEqual(r.diff, { added: [], removed: ['OLD_KEY'], changed: ['MAX_NUM_SEQS'] });
    assert.deepEqual(r.currentIdentity, plan.env.identity);
    assert.equal(r.currentBodyMatches, false, 'the body was edited after the render');
    assert.ok(!JSON.stringify(r).includes('sk-preflight-secret'));
    assert.deepEqual(readdirSync(node.recipeDir).sort(), before);
  } finally {
    node.addImage(PROFILE_IMAGE);
    node.exec('docker rm -f vllm-other >/dev/null');
  }
});

test('preflight counts open client connections on the server port', async () => {
  const plan = h.plan('spark2', 'datagen');
  const server = net.createServer(() => undefined);
  await new Promise<void>((res) => server.listen(plan.expect.port, '127.0.0.1', () => res()));
  const clients = await Promise.all([1, 2].map(() => new Promise<net.Socket>((res) => {
    const c = net.connect(plan.expect.port, '127.0.0.1', () => res(c));
  })));
  try {
    assert.equal((await runPreflight(s, plan)).openConnections, 2);
  } finally {
    clients.forEach((c) => c.destroy());
    await new Promise((res) => server.close(res));
  }
});

test('stepScripts: the exact text of every step, prelude and quoted inputs first, never --no-launch', () => {
  const plan = h.plan('spark2', 'best');
  const steps = stepScripts(plan);
  // the drain's script too (issue 29): it runs when a container serves, and the dry-run shows what it would run
  assert.deepEqual(steps.map((x) => x.step), ['preflight', 'mkdir', 'drain', 'stop', 'memory', 'write-env', 'start', 'readiness', 'verify']);
  for (const st of steps) {
    assert.ok(st.script.startsWith('{\n# pulse prelude') && st.script.endsWith('\n}\n'), st.step);
    assert.match(st.script, /^export PULSE_[A-Z_]+='/m);
  }
  const start = steps.find((x) => x.step === 'start')?.script ?? '';
  assert.ok(!/start\.sh.*--no-launch|"\$start" --no-launch/.test(start));
  assert.match(start, /setsid nohup env -i/);
  assert.deepEqual(stepScripts({ ...plan, action: 'down' } as never).map((x) => x.step), ['stop']);
});

test('verify reports a wrong served model and a wrong max_model_len as problems, a missing proof as a warning', async () => {
  const node = h.sim.node('spark2');
  const plan = h.plan('spark2', 'datagen');
  const withProof = { ...plan, proofs: ['this proof line is never logged'] };
  for (const [failure, problem] of [['wrong-model', /served model is .*, expected qwen38/], ['wrong-max-len', /max_model_len is \d+, expected 262144/]] as const) {
    await stopServer(s, plan.recipe);
    node.setFailure(failure);
    await makeDirs(s, plan);
    await writeEnv(s, plan);
    const st = await startServer(s, plan, `verify-${failure}`);
    const ready = await pollUntil(() => probeReadiness(s, plan), (r) => r.ready);
    assert.equal(ready.ready, true, `${ready.detail}: ${node.exec(`tail -5 ${st.logPath}`)}`);
    const v = await verifyServer(s, withProof, st.logPath);
    assert.equal(v.ok, false);
    assert.match(v.problems.join('; '), problem);
    assert.deepEqual(v.proofs, [{ text: 'this proof line is never logged', found: false }]);
    assert.ok(v.warnings.some((w) => w.includes('this proof line is never logged')));
  }
  node.setFailure('none');
  await stopServer(s, plan.recipe);
});

test('ssh -G failure (a broken ssh config) is a config error naming the alias', async () => {
  const saved = process.env.PULSE_SSH_CONFIG;
  const bad = join(h.tmp, 'broken.config');
  writeFileSync(bad, 'Host spark2\n  NoSuchOption yes\n');
  process.env.PULSE_SSH_CONFIG = bad;
  try {
    await assert.rejects(openSession({ name: 'spark2', host: 'ssh', ssh: 'spark2' }), (e: unknown) => e instanceof PulseError && e.kind === 'config' && /spark2: cannot resolve the ssh config/.test(e.message));
  } finally {
    process.env.PULSE_SSH_CONFIG = saved;
  }
});
