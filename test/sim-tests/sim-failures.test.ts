import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseNodesConfig } from '../../runtime/config/nodes.js';
import { startSim, stopAllSims, CONTAINER_NAME, PROFILE_IMAGE } from '../sim/index.js';
import type { FailureMode, Sim } from '../sim/index.js';
import { eventually, renderEnv, sshScript, startScript } from './helpers.js';

/**
 * docker run of the simulated vLLM on `node`, then up to `tries` /v1/models probes 50 ms apart, until a 200 (3 s by
 * default: what a mode that never answers waits; a start that must answer passes 600, as a loaded machine needs);
 * prints the last status.
 */
function runVllm(sim: Sim, node: string, extra = '', tries = 60): string {
  const port = sim.node(node).vllmPort;
  return `docker run -d --name ${CONTAINER_NAME} --gpus all --network host ${PROFILE_IMAGE} vllm serve Qwen/Qwen3.8-Flash-Next --served-model-name qwen38 --max-model-len 65536 --port ${port} --host 127.0.0.1 ${extra} >/dev/null
code=000; for i in $(seq ${tries}); do code=$(curl -s -o /tmp/models-$$ -w '%{http_code}' localhost:${port}/v1/models); [ "$code" = 200 ] && break; sleep 0.05; done
echo "code=$code"; cat /tmp/models-$$ 2>/dev/null; echo; rm -f /tmp/models-$$
echo "state=$(docker inspect --format '{{.State.Status}} {{.State.ExitCode}}' ${CONTAINER_NAME})"
docker logs ${CONTAINER_NAME} 2>&1 | tail -3
docker rm -f ${CONTAINER_NAME} >/dev/null`;
}

/** A process's command line ('' once it is gone: processes come and go between listing and reading). */
function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

describe('simulator failure modes and controls', () => {
  let sim: Sim;
  before(async () => {
    sim = await startSim({ nodes: ['alpha', 'beta'], readyDelayMs: 100, loginShells: { beta: '/bin/sh' } });
  });
  after(() => stopAllSims());

  // [mode, what /v1/models gave, the container's state, probes: a mode that answers gets up to 30 s (a loaded
  // machine), one that never answers waits the 3 s]
  const cases: [FailureMode, RegExp, RegExp, number][] = [
    ['crash-at-start', /^code=000$/m, /^state=exited 1$/m, 60],
    ['die-during-readiness', /^code=000$/m, /^state=exited 1$/m, 60],
    ['wrong-model', /"id":"Qwen\/Qwen3.8-Flash-Next"/, /^state=running 0$/m, 600],
    ['wrong-max-len', /"max_model_len":32768/, /^state=running 0$/m, 600],
  ];
  for (const [mode, served, state, tries] of cases) {
    test(`failure mode ${mode}`, async () => {
      const n = sim.node('beta');
      n.setFailure(mode);
      try {
        const r = await sshScript(sim, 'beta', runVllm(sim, 'beta', '', tries));
        assert.match(r.stdout, served);
        assert.match(r.stdout, state);
      } finally {
        n.setFailure('none');
      }
    });
  }

  test('a healthy start serves the name and length it was given; never-ready never listens', async () => {
    const ok = await sshScript(sim, 'beta', runVllm(sim, 'beta', '', 600));
    assert.match(ok.stdout, /"id":"qwen38"/);
    assert.match(ok.stdout, /"max_model_len":65536/);
    sim.node('beta').setFailure('never-ready');
    const never = await sshScript(sim, 'beta', runVllm(sim, 'beta'));
    sim.node('beta').setFailure('none');
    assert.match(never.stdout, /^code=000$/m);
    assert.match(never.stdout, /^state=running 0$/m);
    assert.doesNotMatch(never.stdout, /Application startup complete/);
  });

  test('slow mode: the server listens but answers only after slowMs', async () => {
    const n = sim.node('beta');
    n.setFailure('slow');
    n.setControl({ slowMs: 4000 });
    try {
      const r = await sshScript(
        sim,
        'beta',
        `docker run -d --name ${CONTAINER_NAME} --gpus all --network host ${PROFILE_IMAGE} vllm serve m --port ${n.vllmPort} --host 127.0.0.1 >/dev/null
for i in $(seq 100); do docker logs ${CONTAINER_NAME} 2>&1 | grep -q 'startup complete' && break; sleep 0.05; done
curl -s -o /dev/null --max-time 1 localhost:${n.vllmPort}/v1/models; echo "curl=$?"
docker rm -f ${CONTAINER_NAME} >/dev/null`,
      );
      assert.match(r.stdout, /^curl=28$/m, 'curl timed out instead of being refused (7) or answered (0)');
    } finally {
      n.setFailure('none');
    }
  });

  test('stop.sh modes: fail, noop (container stays), ok', async () => {
    const n = sim.node('alpha');
    const up = await sshScript(sim, 'alpha', `docker run -d --name ${CONTAINER_NAME} ${PROFILE_IMAGE} sleep 60 >/dev/null`);
    assert.equal(up.code, 0, up.stderr);
    n.setStopMode('fail');
    assert.equal((await sshScript(sim, 'alpha', `bash ${n.recipeDir}/stop.sh`)).code, 1);
    n.setStopMode('noop');
    assert.equal((await sshScript(sim, 'alpha', `bash ${n.recipeDir}/stop.sh`)).code, 0);
    assert.equal(n.containers()[0]?.State.Running, true);
    n.setStopMode('ok');
    assert.equal((await sshScript(sim, 'alpha', `bash ${n.recipeDir}/stop.sh`)).code, 0);
    assert.deepEqual(n.containers(), []);
    assert.equal(n.stopShCalls().length, 3);
  });

  test('a removed image fails image inspect and docker run', async () => {
    const n = sim.node('alpha');
    n.removeImage(PROFILE_IMAGE);
    const r = await sshScript(sim, 'alpha', `docker image inspect ${PROFILE_IMAGE} >/dev/null; echo "inspect=$?"; docker run -d ${PROFILE_IMAGE} sleep 1; echo "run=$?"`);
    n.addImage(PROFILE_IMAGE);
    assert.match(r.stdout, /^inspect=1$/m);
    assert.match(r.stdout, /^run=125$/m);
    assert.match(r.stderr, /No such image/);
  });

  test('nvidia-smi lists running vLLM containers unless hidden; the GPU probe is recorded', async () => {
    const n = sim.node('alpha');
    // Up to 30 s for the start: a loaded machine (two test files at once) took longer than 3 s, and nvidia-smi then
    // listed nothing yet.
    const script = `${runVllm(sim, 'alpha', '', 600).split('\ndocker rm')[0]}\nnvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader; echo "hidden:"; docker rm -f ${CONTAINER_NAME} >/dev/null`;
    const shown = await sshScript(sim, 'alpha', script);
    assert.match(shown.stdout, /^\d+, VLLM::EngineCore$/m);
    n.setControl({ nvidiaSmiHidesContainers: true });
    const hidden = await sshScript(sim, 'alpha', script);
    n.setControl({ nvidiaSmiHidesContainers: false });
    assert.doesNotMatch(hidden.stdout, /EngineCore/);
    const probe = await sshScript(sim, 'alpha', `docker run --rm --gpus all nvidia/cuda:13.0.1-base-ubuntu24.04 nvidia-smi -L`);
    assert.match(probe.stdout, /^GPU 0: NVIDIA GB10/m);
    assert.equal(n.gpuProbeCalls().length, 1);
    assert.equal(sim.node('beta').gpuProbeCalls().length, 0);
    // nvidia-smi comes from the GPU hook, as the driver's does: a container without --gpus has none.
    const noGpu = await sshScript(sim, 'alpha', `docker run --rm nvidia/cuda:13.0.1-base-ubuntu24.04 nvidia-smi -L; echo "rc=$?"`);
    assert.match(noGpu.stdout, /^rc=127$/m);
  });

  test('gpuDriverBroken: the GPU hook fails the start, the container stays created with ExitCode 128 and the cause in State.Error', async () => {
    const n = sim.node('alpha');
    n.setControl({ gpuDriverBroken: true });
    try {
      const r = await sshScript(sim, 'alpha', `docker run -d --name ${CONTAINER_NAME} --gpus all --network host ${PROFILE_IMAGE} vllm serve m >/dev/null; echo "run=$?"
docker container inspect --format '{{.State.Status}} {{.State.Running}} {{.State.ExitCode}} {{.State.StartedAt}}|{{.State.Error}}' ${CONTAINER_NAME}`);
      assert.match(r.stdout, /^run=125$/m);
      assert.match(r.stdout, /^created false 128 0001-01-01T00:00:00Z\|.*error running hook #0: .*nvidia-container-cli: initialization error: nvml error: driver not loaded/m);
      assert.match(r.stderr, /nvml error: driver not loaded/);
      assert.equal(n.gpuContainers().at(-1)?.ok, false);
    } finally {
      n.setControl({ gpuDriverBroken: false });
      n.exec(`docker rm -f ${CONTAINER_NAME} >/dev/null 2>&1 || true`);
    }
  });

  test('freezeDaemon: docker calls hang while the daemon is stopped, and answer once it thaws', async () => {
    const n = sim.node('alpha');
    n.freezeDaemon(true);
    try {
      const r = await sshScript(sim, 'alpha', 'timeout 2 docker ps >/dev/null; echo "frozen=$?"');
      assert.match(r.stdout, /^frozen=124$/m);
    } finally {
      n.freezeDaemon(false);
    }
    const r = await sshScript(sim, 'alpha', 'docker ps >/dev/null; echo "thawed=$?"');
    assert.match(r.stdout, /^thawed=0$/m);
  });

  test('killSshSessions drops open connections; stopSshd makes the node unreachable until startSshd', async () => {
    const n = sim.node('alpha');
    const long = sshScript(sim, 'alpha', 'echo started; sleep 30; echo finished');
    assert.ok(await eventually(() => n.processes().some((p) => cmdline(p).startsWith('sleep\x0030'))));
    n.killSshSessions();
    const dropped = await long;
    assert.notEqual(dropped.code, 0);
    assert.doesNotMatch(dropped.stdout, /finished/);
    await n.stopSshd();
    assert.notEqual((await sshScript(sim, 'alpha', 'true')).code, 0);
    await n.startSshd();
    const back = await sshScript(sim, 'alpha', 'grep -c MemAvailable /proc/meminfo');
    assert.equal(back.stdout.trim(), '1');
  });

  test('a node with another login shell still runs bash -s scripts; hostname is the node name', async () => {
    const shell = await sshScript(sim, 'beta', 'echo "bash=$BASH_VERSION host=$(hostname)"');
    assert.match(shell.stdout, /^bash=\d.* host=beta$/m);
    const r = await new Promise<string>((resolve) => {
      execFile('ssh', ['-F', sim.sshConfigPath, 'beta', 'echo "$0"'], (_e, out) => resolve(out));
    });
    assert.equal(r.trim(), 'sh', 'the command line is parsed by the login shell /bin/sh');
  });

  test('BIND=<node address>: vLLM listens there, the localhost check of start.sh fails and it removes the container', async () => {
    const n = sim.node('beta');
    fs.writeFileSync(n.envPath, renderEnv(sim, 'beta', { BIND: n.address, READY_TIMEOUT_S: '2' }));
    const before = n.requests().length;
    const r = await sshScript(sim, 'beta', startScript(sim, 'beta'));
    assert.match(r.stdout, /^rc=1$/m);
    assert.match(fs.readFileSync(path.join(n.paths.logsDir, 'pulse-up-test.log'), 'utf8'), /not ready after 2s; removing the container/);
    assert.deepEqual(n.containers(), []);
    assert.equal(n.requests().length, before, 'no readiness probe reached the server: it listened on the node address only');
  });

  test('stopDaemon: every docker command fails as the real CLI does without a daemon; startDaemon brings it back', async () => {
    const n = sim.node('alpha');
    await n.stopDaemon();
    const r = await sshScript(sim, 'alpha', `docker ps; echo "ps=$?"; docker inspect ${CONTAINER_NAME}; echo "inspect=$?"`);
    await n.startDaemon();
    const back = await sshScript(sim, 'alpha', 'docker ps >/dev/null; echo "ps=$?"');
    assert.match(back.stdout, /^ps=0$/m);
    assert.match(r.stdout, /^ps=1$/m);
    assert.match(r.stdout, /^inspect=1$/m);
    assert.match(r.stderr, /Cannot connect to the Docker daemon/);
  });

  test('freezeSshd: a new connection gets no banner until the sshd is thawed', async () => {
    const n = sim.node('alpha');
    n.freezeSshd();
    let frozen: { code: number | null; stderr: string };
    try {
      frozen = await new Promise((resolve) => {
        execFile('ssh', ['-F', sim.sshConfigPath, '-o', 'ConnectTimeout=1', 'alpha', 'true'], (err, _o, stderr) => resolve({ code: err ? 1 : 0, stderr }));
      });
    } finally {
      n.freezeSshd(false);
    }
    assert.equal(frozen.code, 1);
    assert.match(frozen.stderr, /banner exchange|timed out/i);
    assert.equal((await sshScript(sim, 'alpha', 'true')).code, 0);
  });

  test('writeNodesJson passes the production nodes.json parser', () => {
    const file = path.join(sim.dir, 'nodes.json');
    sim.writeNodesJson(file, { protected: ['alpha'], nodeMinMem: { beta: 90 } });
    const cfg = parseNodesConfig(fs.readFileSync(file, 'utf8'), file);
    assert.deepEqual(Object.keys(cfg.nodes), ['alpha', 'beta']);
    assert.equal(cfg.nodes.alpha?.protected, true);
    assert.equal(cfg.nodes.beta?.env.PORT, String(sim.node('beta').vllmPort));
    assert.equal(cfg.nodes.beta?.minMemAvailableGiB, 90);
    assert.equal(cfg.nodes.beta?.recipes['qwen38-flash']?.container, CONTAINER_NAME);
    assert.equal(cfg.nodes.alpha?.gatewayUrl, `http://127.0.0.1:${sim.node('alpha').vllmPort}/v1`);
    assert.equal(cfg.nodes.beta?.gatewayUrl, `http://${sim.node('beta').address}:${sim.node('beta').vllmPort}/v1`);
  });
});

test('the recipe watchdog stops the server when watermark 300 pushes MemFree below the floor', async () => {
  const sim = await startSim({ nodes: 1, readyDelayMs: 100 });
  try {
    const n = sim.node('spark1');
    n.setSudo(false);
    fs.writeFileSync(n.envPath, renderEnv(sim, 'spark1', { MEMWATCH_RELIEF: 'drop_caches', MEMWATCH_FLOOR_GIB: '6' }));
    const r = await sshScript(sim, 'spark1', startScript(sim, 'spark1'));
    assert.match(r.stdout, /^rc=0$/m);
    assert.ok(await eventually(() => n.memAvailableGiB() < 30));
    n.setWatermark(300);
    assert.ok(await eventually(() => n.containers()[0]?.State.Running === false), 'the watchdog stopped the container');
    const log = fs.readFileSync(path.join(n.paths.logsDir, 'memwatch.log'), 'utf8');
    assert.equal(log.match(/sudo -n failed/g)?.length, 1);
    assert.match(log, /floor: stopping vllm-qwen38/);
    assert.ok(await eventually(() => n.memAvailableGiB() > 90 && n.memAvailableGiB() < 100), 'idle MemAvailable at factor 300 is below the 100 GiB gate');
  } finally {
    await sim.stop();
  }
});
