import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mountNamespace, mountTag, processesIn } from '../sim/procs.js';
import { reapStaleSims } from '../sim/registry.js';
import { enginePids } from '../sim/engine.js';
import { PROFILE_IMAGE } from '../sim/index.js';

const simIndex = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../sim/index.js');

/**
 * A child node process that starts a 1-node sim with a running container, prints its namespaces and its engine's
 * cgroup (dockerd, containerd, the shim and the container live there), then `ending`.
 */
function childWithSim(ending: string): Promise<{ child: ReturnType<typeof spawn>; dir: string; ns: string[]; key: string }> {
  const code = `
    import { startSim } from ${JSON.stringify(simIndex)};
    import { execFileSync } from 'node:child_process';
    const sim = await startSim({ nodes: 1 });
    const n = sim.node('spark1');
    n.exec('docker run -d --name c1 ${PROFILE_IMAGE} sleep 300 >/dev/null');
    console.log(JSON.stringify({ dir: sim.dir, ns: [...n.namespaces], key: n.cgroupKey }));
    ${ending}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve({ child, ...(JSON.parse(out) as { dir: string; ns: string[]; key: string }) });
    });
    child.on('exit', (code) => (out.includes('\n') ? undefined : reject(new Error(`child exited ${code} before the sim ran`))));
  });
}

test('a test process that exits without stop() still kills its nodes (exit hook)', async () => {
  const { child, dir, ns, key } = await childWithSim('setTimeout(() => process.exit(1), 100);');
  await new Promise((r) => child.on('exit', r));
  try {
    assert.deepEqual(processesIn(new Set(ns), mountTag(dir)), []);
    assert.deepEqual(enginePids(key), [], 'the dockerd, its containerd, shims and containers are gone');
    assert.equal(fs.existsSync(dir), false, 'the temp dir is gone too');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the nodes of a SIGKILLed test process are reaped by the next sim start', async () => {
  const { child, dir, ns, key } = await childWithSim('setInterval(() => undefined, 1000);');
  try {
    assert.ok(processesIn(new Set(ns), mountTag(dir)).length >= 1, 'the sshd runs');
    assert.ok(enginePids(key).length >= 4, 'dockerd, containerd, the shim and the container run');
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    assert.ok(processesIn(new Set(ns), mountTag(dir)).length >= 1, 'no exit hook runs on SIGKILL');
    assert.ok(enginePids(key).length >= 4, 'the engine outlives its test process');
    reapStaleSims();
    assert.deepEqual(processesIn(new Set(ns), mountTag(dir)), []);
    assert.deepEqual(enginePids(key), [], 'the engine and its container are reaped too');
    assert.equal(fs.existsSync(dir), false, 'the temp dir is gone too');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a stale registry entry never kills a namespace that is not a sim node (namespace ids are recycled)', async () => {
  const other = spawn('unshare', ['--mount', '--propagation', 'private', 'sleep', '30'], { stdio: 'ignore' });
  const gone = spawn('true');
  await new Promise((r) => gone.on('exit', r));
  try {
    let ns: string | null = null;
    for (let i = 0; i < 100 && (ns === null || ns === mountNamespace(process.pid)); i++) {
      await new Promise((r) => setTimeout(r, 20));
      ns = mountNamespace(other.pid!);
    }
    const registry = path.join(os.tmpdir(), 'pulse-sim-registry');
    fs.mkdirSync(registry, { recursive: true });
    fs.writeFileSync(path.join(registry, `${gone.pid}-fake.json`), JSON.stringify({ owner: gone.pid, dir: '/tmp/pulse-sim-gone', ns: [ns] }));
    reapStaleSims();
    assert.equal(other.exitCode, null);
    assert.equal(other.signalCode, null, 'the unrelated process survived');
  } finally {
    other.kill('SIGKILL');
  }
});
