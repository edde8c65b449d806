/**
 * The simulated docker follows moby/moby and docker/cli where pulse depends on it: `docker inspect` finds images
 * and volumes by name, every container state docker names (paused, restarting, removing, dead), stop on a paused
 * container, the restart policy and RestartCount, exit codes 137/143/130, the merged log config, Go's time
 * format, docker exec (the container's pid view), and vLLM's SO_REUSEPORT socket that a stray server can share.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSim, stopAllSims, CONTAINER_NAME, PROFILE_IMAGE } from '../sim/index.js';
import type { Sim } from '../sim/index.js';
import { sshScript } from './helpers.js';

const q = (s: string) => `'${s}'`;

describe('simulated docker fidelity', () => {
  let sim: Sim;
  before(async () => {
    sim = await startSim({ nodes: ['alpha'], readyDelayMs: 200 });
  });
  after(() => stopAllSims());

  const run = (extra = '', cmd = 'sleep 300') => `docker run -d --name ${CONTAINER_NAME} ${extra} ${PROFILE_IMAGE} ${cmd} >/dev/null`;
  const sh = async (script: string) => {
    const r = await sshScript(sim, 'alpha', `exec 2>&1\n${script}`);
    return r.stdout + r.stderr;
  };

  test('docker inspect NAME finds an image or a volume of that name; docker container inspect does not', async () => {
    const n = sim.node('alpha');
    n.addImage(`${CONTAINER_NAME}:latest`);
    n.addVolume('vllm-cache');
    const out = await sh(`docker inspect ${CONTAINER_NAME} >/dev/null; echo "image rc=$?"
docker inspect --format '{{.State.Running}}' ${CONTAINER_NAME}; echo "image fmt rc=$?"
docker container inspect ${CONTAINER_NAME} >/dev/null; echo "container rc=$?"
docker inspect --type container ${CONTAINER_NAME} >/dev/null 2>&1; echo "type rc=$?"
docker inspect vllm-cache >/dev/null; echo "volume rc=$?"
docker inspect nothing-here; echo "none rc=$?"`);
    n.removeImage(`${CONTAINER_NAME}:latest`);
    assert.match(out, /^image rc=0$/m);
    assert.match(out, /map has no entry for key "State"/);
    assert.match(out, /^image fmt rc=1$/m);
    assert.match(out, /No such container: vllm-qwen38\ncontainer rc=1/);
    assert.match(out, /^type rc=1$/m);
    assert.match(out, /^volume rc=0$/m);
    assert.match(out, /^\[\]\nError: No such object: nothing-here\nnone rc=1$/m, "an empty list and exit 1, as the CLI prints");
  });

  test('pause: Running stays true, Status paused; rm without -f refuses; stop resumes and stops it (143 from sleep)', async () => {
    const out = await sh(`${run()}
docker pause ${CONTAINER_NAME} >/dev/null
docker container inspect --format '{{.State.Status}} {{.State.Running}} {{.State.Paused}}' ${CONTAINER_NAME}
docker ps --format '{{.Status}}'
docker rm ${CONTAINER_NAME}; echo "rm rc=$?"
docker stop -t 2 ${CONTAINER_NAME} >/dev/null
docker container inspect --format '{{.State.Status}} {{.State.ExitCode}} {{.State.Paused}}' ${CONTAINER_NAME}
docker rm ${CONTAINER_NAME} >/dev/null; echo "rm2 rc=$?"`);
    assert.match(out, /^paused true true$/m);
    assert.match(out, /^Up .* \(Paused\)$/m);
    assert.match(out, /container is paused and must be unpaused first\nrm rc=1/);
    assert.match(out, /^exited 143 false$/m);
    assert.match(out, /^rm2 rc=0$/m);
  });

  test('a restart policy restarts a crashing container: restarting, RestartCount grows; stop cancels it', async () => {
    const out = await sh(`${run('--restart on-failure', 'sh -c "sleep 0.1; exit 3"')}
for i in $(seq 100); do c=$(docker container inspect --format '{{.RestartCount}}' ${CONTAINER_NAME}); [ "$c" -ge 3 ] && break; sleep 0.05; done
echo "count>=3: $c"
seen=; for i in $(seq 100); do s=$(docker container inspect --format '{{.State.Status}} {{.State.Running}} {{.State.ExitCode}}' ${CONTAINER_NAME}); case $s in restarting*) seen=$s; break;; esac; sleep 0.02; done
echo "seen: $seen"
docker stop ${CONTAINER_NAME} >/dev/null
docker container inspect --format 'after stop: {{.State.Status}} {{.State.Running}}' ${CONTAINER_NAME}
docker rm ${CONTAINER_NAME} >/dev/null`);
    assert.match(out, /^count>=3: \d+$/m);
    assert.match(out, /^seen: restarting true 3$/m, 'restarting counts as Running, with the last exit code');
    assert.match(out, /^after stop: exited false$/m);
  });

  test('docker stop of a process that ignores SIGTERM: SIGKILL after -t, exit code 137; stop of a stopped one is a success', async () => {
    const out = await sh(`${run('', `sh -c "trap '' TERM; while :; do sleep 0.1; done"`)}
sleep 0.5 # let sh set its trap first
docker stop -t 1 ${CONTAINER_NAME} >/dev/null
docker container inspect --format '{{.State.Status}} {{.State.ExitCode}}' ${CONTAINER_NAME}
docker stop ${CONTAINER_NAME}; echo "again rc=$?"
docker kill ${CONTAINER_NAME}; echo "kill rc=$?"
docker rm ${CONTAINER_NAME} >/dev/null`);
    assert.match(out, /^exited 137$/m);
    assert.match(out, /^vllm-qwen38\nagain rc=0$/m);
    assert.match(out, /is not running\nkill rc=1/);
  });

  test('a slow removal shows removing and refuses a second rm; a failed one leaves the container dead', async () => {
    const n = sim.node('alpha');
    n.setControl({ removeDelayMs: 1500 });
    const out = await sh(`${run()}
docker rm -f ${CONTAINER_NAME} >/dev/null &
for i in $(seq 100); do s=$(docker container inspect --format '{{.State.Status}}' ${CONTAINER_NAME} 2>/dev/null); [ "$s" = removing ] && break; sleep 0.05; done
echo "state: $s"; docker ps -a --filter status=removing --format 'ps: {{.Names}} {{.Status}}'
docker rm -f ${CONTAINER_NAME}; echo "second rc=$?"
wait; docker container inspect ${CONTAINER_NAME} >/dev/null 2>&1; echo "gone rc=$?"`);
    n.setControl({ removeDelayMs: 0, removeFailures: 1 });
    const dead = await sh(`${run()}
docker rm -f ${CONTAINER_NAME}; echo "rm rc=$?"
docker container inspect --format '{{.State.Status}} {{.State.Dead}}' ${CONTAINER_NAME}
docker rm -f ${CONTAINER_NAME}; echo "retry rc=$?"`);
    assert.match(out, /^state: removing$/m);
    assert.match(out, /^ps: vllm-qwen38 Removal In Progress$/m);
    assert.match(out, /removal of container vllm-qwen38 is already in progress\nsecond rc=1/);
    assert.match(out, /^gone rc=1$/m);
    assert.match(dead, /device or resource busy\nrm rc=1/);
    assert.match(dead, /^dead true$/m);
    assert.match(dead, /^vllm-qwen38\nretry rc=0$/m);
  });

  test('HostConfig.LogConfig: json-file without options by default; daemon log-opts merged; --log-opt wins', async () => {
    const n = sim.node('alpha');
    const fmt = q('{{json .HostConfig.LogConfig}}');
    const plain = await sh(`${run()}; docker container inspect --format ${fmt} ${CONTAINER_NAME}; docker rm -f ${CONTAINER_NAME} >/dev/null`);
    n.setDaemonLogConfig({ opts: { 'max-size': '50m', 'max-file': '3' } });
    const daemon = await sh(`${run('--log-opt max-file=5')}; docker container inspect --format ${fmt} ${CONTAINER_NAME}; docker rm -f ${CONTAINER_NAME} >/dev/null`);
    n.setDaemonLogConfig(null);
    assert.match(plain, /^\{"Type":"json-file","Config":\{\}\}$/m);
    assert.match(daemon, /^\{"Type":"json-file","Config":\{"max-file":"5","max-size":"50m"\}\}$/m);
  });

  test('StartedAt in Go RFC3339Nano (trailing zeros dropped); FinishedAt is the zero time while running', async () => {
    const out = await sh(`${run()}; docker container inspect --format '{{.State.StartedAt}} {{.State.FinishedAt}}' ${CONTAINER_NAME}; docker rm -f ${CONTAINER_NAME} >/dev/null`);
    assert.match(out, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z 0001-01-01T00:00:00Z$/m);
  });

  test('docker exec: /proc shows only the container\'s processes; a missing command is 126; paused and stopped refuse', async () => {
    const out = await sh(`${run()}
pid=$(docker container inspect --format '{{.State.Pid}}' ${CONTAINER_NAME})
docker exec ${CONTAINER_NAME} sh -c 'ls -d /proc/[0-9]*' | sed 's|/proc/||' | tr '\\n' ' ' | sed "s|^|seen |; s|$pid|PID|"; echo
echo "node sees $(ls -d /proc/[0-9]* | wc -l)"
docker exec ${CONTAINER_NAME} no-such-tool; echo "missing rc=$?"
docker pause ${CONTAINER_NAME} >/dev/null; docker exec ${CONTAINER_NAME} true; echo "paused rc=$?"
docker unpause ${CONTAINER_NAME} >/dev/null; docker stop -t 1 ${CONTAINER_NAME} >/dev/null; docker exec ${CONTAINER_NAME} true; echo "stopped rc=$?"
docker rm -f ${CONTAINER_NAME} >/dev/null`);
    // The init (the sim's wrapper) and its child `sleep`: nothing else of the node's many processes.
    assert.match(out, /^seen (PID \d+|\d+ PID) $/m, 'the container\'s processes, nothing else of the node');
    assert.match(out, /executable file not found in \$PATH: unknown\nmissing rc=126/);
    assert.match(out, /Container vllm-qwen38 is paused, unpause the container before exec\npaused rc=1/);
    assert.match(out, /container [0-9a-f]{64} is not running\nstopped rc=1/);
  });
});
