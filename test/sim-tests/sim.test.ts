import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { startSim, stopAllSims, CONTAINER_NAME, PROFILE_IMAGE } from '../sim/index.js';
import type { Sim } from '../sim/index.js';
import { enginePids } from '../sim/engine.js';
import { eventually, renderEnv, sshScript, startScript } from './helpers.js';

describe('DGX Spark simulator', () => {
  let sim: Sim;
  before(async () => {
    sim = await startSim({ nodes: 2, readyDelayMs: 200 });
  });
  after(() => stopAllSims());

  test('ssh to a node runs bash -s with the simulated tools and /proc/meminfo', async () => {
    const r = await sshScript(sim, 'spark2', 'echo "shlvl=$SHLVL"; command -v docker nvidia-smi sudo; grep MemAvailable /proc/meminfo; cat /proc/sys/vm/watermark_scale_factor; env -i bash -c "command -v docker"');
    assert.equal(r.code, 0, r.stderr);
    const bin = sim.node('spark2').paths.binDir;
    assert.ok(r.stdout.includes(`${bin}/docker\n${bin}/nvidia-smi\n${bin}/sudo\n`), r.stdout);
    const avail = Number(/MemAvailable:\s+(\d+) kB/.exec(r.stdout)?.[1]);
    assert.equal(avail, 118 * 1024 * 1024);
    assert.match(r.stdout, /^10$/m);
    assert.match(r.stdout, /\/usr\/local\/bin\/docker\n$/, 'env -i finds the node\'s docker on the default PATH');
    const host = fs.readFileSync('/proc/meminfo', 'utf8');
    assert.doesNotMatch(host, new RegExp(`MemAvailable:\\s+${118 * 1024 * 1024} kB`), 'the host /proc/meminfo is untouched');
  });

  test('watermark factor and pinned memory show up on the node', async () => {
    const n = sim.node('spark2');
    n.setWatermark(300);
    n.setMemory({ pinnedAvailableGiB: 60 });
    const r = await sshScript(sim, 'spark2', 'cat /proc/sys/vm/watermark_scale_factor; grep MemAvailable /proc/meminfo');
    n.setWatermark(10);
    n.setMemory({ pinnedAvailableGiB: null });
    assert.match(r.stdout, /^300$/m);
    const gib = Number(/MemAvailable:\s+(\d+) kB/.exec(r.stdout)?.[1]) / 2 ** 20;
    assert.ok(gib < 60 && gib > 30, `factor 300 lowers the pinned 60 GiB: ${gib}`);
  });

  test('the node\'s docker is the real engine: run/ps/inspect/rm as docker does them', async () => {
    const n = sim.node('spark2');
    const missing = `${n.paths.root}/no-such-dir`;
    const r = await sshScript(
      sim,
      'spark2',
      `docker run -d --name c1 -v ${missing}:/x ${PROFILE_IMAGE} sleep 60; echo "missing=$?"
docker run -d --name c1 not-pulled:1 sleep 60; echo "image=$?"
docker rm -f c1 >/dev/null
docker run -d --name c1 -e A=1 -v ${n.hfHome}:/hf:ro ${PROFILE_IMAGE} sleep 60 >/dev/null; echo "run=$?"
docker run -d --name c1 ${PROFILE_IMAGE} sleep 60; echo "dup=$?"
docker ps --filter 'name=^/c1$' --format '{{.Names}}\\t{{.Image}}\\t{{.Status}}'
docker inspect --format '{{.State.Running}} {{json .Config.Env}}' c1
docker inspect --format '{{json .}}' c1 > /tmp/inspect-$$.json; cat /tmp/inspect-$$.json; rm /tmp/inspect-$$.json
docker inspect nope >/dev/null; echo "inspect-missing=$?"
docker rm c1; echo "rm-running=$?"
docker rm -f c1 >/dev/null; echo "rmf=$?"
docker ps -a --format '{{.Names}}'
docker frobnicate; echo "unknown=$?"`,
    );
    // `-v` with a missing source: the engine creates it as an empty root-owned directory and the run succeeds.
    assert.match(r.stdout, /^missing=0$/m);
    assert.equal(fs.statSync(missing).isDirectory(), true);
    assert.equal(fs.statSync(missing).uid, 0);
    assert.match(r.stdout, /^image=125$/m);
    assert.match(r.stdout, /^run=0$/m);
    assert.match(r.stdout, /^dup=125$/m);
    assert.match(r.stdout, new RegExp(`^c1\\t${PROFILE_IMAGE}\\tUp `, 'm'));
    assert.match(r.stdout, /^true \[.*"A=1".*\]$/m);
    const json = JSON.parse(r.stdout.split('\n').find((l) => l.startsWith('{"Id"'))!) as { Name: string; State: { Pid: number; Status: string }; Mounts: { Source: string; Destination: string; RW: boolean }[] };
    assert.equal(json.Name, '/c1');
    assert.equal(json.State.Status, 'running');
    assert.deepEqual(json.Mounts.map((m) => [m.Source, m.Destination, m.RW]), [[n.hfHome, '/hf', false]]);
    assert.match(r.stdout, /^inspect-missing=1$/m);
    assert.match(r.stdout, /^rm-running=1$/m);
    assert.match(r.stdout, /^rmf=0$/m);
    assert.doesNotMatch(r.stdout, /^c1$/m);
    assert.match(r.stdout, /^unknown=1$/m);
    assert.ok(n.containers().length === 0);
  });

  test('a container whose process dies shows as exited', async () => {
    const n = sim.node('spark2');
    await sshScript(sim, 'spark2', `docker run -d --name short ${PROFILE_IMAGE} sh -c 'exit 3' >/dev/null`);
    assert.ok(await eventually(() => n.containers().some((c) => c.Name === '/short' && !c.State.Running)));
    const r = await sshScript(sim, 'spark2', `docker inspect --format '{{.State.Status}} {{.State.ExitCode}} {{.State.Running}}' short; echo "ps=$(docker ps --format '{{.Names}}')"; echo "psa=$(docker ps -a --format '{{.Names}}')"; docker rm short`);
    assert.match(r.stdout, /^exited 3 false$/m);
    assert.match(r.stdout, /^ps=$/m);
    assert.match(r.stdout, /^psa=short$/m);
  });

  test('the simulated vLLM enforces the API key and records every request', async () => {
    const n = sim.node('spark1');
    const run = await sshScript(
      sim,
      'spark1',
      `docker run -d --name ${CONTAINER_NAME} --gpus all --network host ${PROFILE_IMAGE} vllm serve Qwen/Qwen3.8-Flash-Next --served-model-name qwen38 --max-model-len 65536 --port ${n.vllmPort} --host 127.0.0.1 --api-key k3y >/dev/null
for i in $(seq 100); do curl -s -o /dev/null localhost:${n.vllmPort}/health && break; sleep 0.05; done
echo "no-key=$(curl -s -o /dev/null -w '%{http_code}' localhost:${n.vllmPort}/v1/models)"
curl -s -H 'Authorization: Bearer k3y' localhost:${n.vllmPort}/v1/models; echo
curl -s -H 'Authorization: Bearer k3y' -H 'content-type: application/json' -d '{"model":"qwen38","messages":[{"role":"user","content":"ping"}]}' localhost:${n.vllmPort}/v1/chat/completions; echo
docker rm -f ${CONTAINER_NAME} >/dev/null`,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^no-key=401$/m);
    const models = JSON.parse(run.stdout.split('\n').find((l) => l.startsWith('{"object":"list"'))!) as { data: { id: string; max_model_len: number }[] };
    assert.deepEqual([models.data[0]?.id, models.data[0]?.max_model_len], ['qwen38', 65536]);
    const chat = JSON.parse(run.stdout.split('\n').find((l) => l.includes('chat.completion'))!) as { usage: { total_tokens: number } };
    assert.ok(chat.usage.total_tokens > 0);
    const reqs = n.requests().filter((q) => q.path.startsWith('/v1'));
    assert.deepEqual(reqs.map((q) => [q.path, q.status, q.authorized]), [['/v1/models', 401, false], ['/v1/models', 200, true], ['/v1/chat/completions', 200, true]]);
    assert.equal(sim.node('spark2').requests().length, 0, 'no request reached the other node');
  });

  test('recipe start.sh brings the server up once, with proof lines and the KV cache line', async () => {
    const n = sim.node('spark1');
    fs.writeFileSync(n.envPath, renderEnv(sim, 'spark1', { API_KEY: 'k3y' }));
    const r = await sshScript(sim, 'spark1', `${startScript(sim, 'spark1')}\ndocker logs ${CONTAINER_NAME} 2>&1; grep MemAvailable /proc/meminfo`);
    assert.match(r.stdout, /^rc=0$/m, fs.readFileSync(`${n.paths.logsDir}/pulse-up-test.log`, 'utf8'));
    assert.match(r.stdout, /GPU KV cache size: [\d,]+ tokens/);
    assert.match(r.stdout, /MTP draft head: FP8 rowwise copy engaged/);
    assert.match(r.stdout, /MTP shard r2: loaded/);
    assert.match(r.stdout, /block-drop backport: enabled/, 'the shipped profile turns it on (VLLM_BLOCK_DROP_BACKPORT=1)');
    assert.match(r.stdout, /Application startup complete\./);
    assert.equal(n.startShCalls().length, 1);
    assert.equal(n.noLaunchCalled(), false);
    const rec = n.containers()[0]!;
    assert.ok(rec.Config.Cmd?.includes('--api-key'), 'API_KEY reached vLLM as --api-key');
    assert.ok(await eventually(() => n.memAvailableGiB() < 30), 'MemAvailable falls while the container runs');
    n.rotateLog();
    const logs = await sshScript(sim, 'spark1', `docker logs ${CONTAINER_NAME} 2>&1`);
    assert.doesNotMatch(logs.stdout, /GPU KV cache size/);
    const stop = await sshScript(sim, 'spark1', `bash ${n.recipeDir}/stop.sh; docker ps -a --format '{{.Names}}'`);
    assert.match(stop.stdout, /stopped/);
    assert.equal(n.containers().length, 0);
    assert.ok(await eventually(() => n.memAvailableGiB() > 100), 'MemAvailable recovers after the stop');
  });

  test('start.sh --no-launch is detectable: marker, helper container, .last_launch.sh', async () => {
    const n = sim.node('spark2');
    fs.writeFileSync(n.envPath, renderEnv(sim, 'spark2'));
    assert.equal(n.noLaunchCalled(), false);
    const calls = n.startShCalls().length;
    const r = await sshScript(sim, 'spark2', `cd ${n.recipeDir} && env -i bash start.sh --no-launch; docker rm -f ${CONTAINER_NAME}-prep`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(n.noLaunchCalled(), true);
    assert.equal(n.startShCalls().length, calls + 1);
    assert.match(n.startShCalls().at(-1) ?? '', /args=--no-launch$/);
    assert.ok(fs.existsSync(`${n.recipeDir}/.last_launch.sh`));
    assert.ok(n.dockerCalls().some((c) => c.argv.includes(`${CONTAINER_NAME}-prep`) && c.argv[0] === 'run'));
  });

  test('start.sh removes the container after READY_TIMEOUT_S when vLLM never becomes ready', async () => {
    const n = sim.node('spark2');
    n.setFailure('never-ready');
    fs.writeFileSync(n.envPath, renderEnv(sim, 'spark2', { READY_TIMEOUT_S: '1' }));
    const r = await sshScript(sim, 'spark2', startScript(sim, 'spark2'));
    n.setFailure('none');
    assert.match(r.stdout, /^rc=1$/m);
    assert.match(fs.readFileSync(`${n.paths.logsDir}/pulse-up-test.log`, 'utf8'), /not ready after 1s; removing the container/);
    assert.equal(n.containers().length, 0);
    assert.ok(n.dockerCalls().some((c) => c.argv.join(' ') === `rm -f ${CONTAINER_NAME}`));
  });

  test('sudo -n follows the node setting; a wrong host key is refused by ssh', async () => {
    const n = sim.node('spark2');
    n.setSudo(false);
    const no = await sshScript(sim, 'spark2', 'sudo -n true; echo "rc=$?"');
    n.setSudo(true);
    const yes = await sshScript(sim, 'spark2', 'sudo -n true; echo "rc=$?"');
    assert.match(no.stdout, /^rc=1$/m);
    assert.match(no.stderr, /a password is required/);
    assert.match(yes.stdout, /^rc=0$/m);
    const kh = `${sim.dir}/kh-wrong`;
    const cfg = `${sim.dir}/config-wrong`;
    sim.writeKnownHosts(kh, { wrongKey: { aliases: ['spark2'], key: sim.foreignHostKey } });
    sim.writeSshConfig(cfg, kh);
    const bad = await sshScript(sim, 'spark2', 'echo reached', cfg);
    assert.notEqual(bad.code, 0);
    assert.doesNotMatch(bad.stdout, /reached/);
    const hashed = `${sim.dir}/kh-hashed`;
    sim.writeKnownHosts(hashed, { hashed: true });
    assert.match(fs.readFileSync(hashed, 'utf8'), /^\|1\|/);
    sim.writeSshConfig(cfg, hashed);
    assert.match((await sshScript(sim, 'spark2', 'echo reached', cfg)).stdout, /reached/);
  });
});

test('stop() leaves no process of the sim behind', async () => {
  const sim = await startSim({ nodes: 1, readyDelayMs: 100 });
  try {
    const n = sim.node('spark1');
    fs.writeFileSync(n.envPath, renderEnv(sim, 'spark1'));
    const r = await sshScript(sim, 'spark1', `${startScript(sim, 'spark1')}\n(setsid sleep 300 </dev/null >/dev/null 2>&1 &)`);
    assert.match(r.stdout, /^rc=0$/m);
    assert.ok(n.processes().length >= 2, 'sshd and the detached sleep run');
    assert.ok(enginePids(n.cgroupKey).length >= 4, 'dockerd, containerd, the shim and the container run');
  } finally {
    await sim.stop();
  }
  assert.deepEqual(enginePids(sim.nodes[0]!.cgroupKey), [], 'the engine and its container are gone');
  assert.doesNotMatch(fs.readFileSync('/proc/self/mountinfo', 'utf8'), new RegExp(sim.dir), 'no mount of the sim is left');
  const ps = execFileSync('ps', ['-eo', 'pid,stat,args'], { encoding: 'utf8' });
  const left = ps.split('\n').filter((l) => l.includes(sim.dir) && !/\sZ/.test(l));
  assert.deepEqual(left, []);
  assert.deepEqual(sim.nodes[0]!.processes(), []);
  assert.equal(fs.existsSync(sim.dir), false);
});
