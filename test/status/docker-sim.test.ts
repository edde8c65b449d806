/**
 * status through the CLI against the node's real Docker engine (docs/SIMULATOR.md, "The Docker engine"): an image
 * and a volume named like the container are not the container; every state the engine can be brought to shows as
 * docker names it, with the last exit in words and the restart count; the log config is the container's real one
 * (daemon log-opts merged with --log-opt), not an assumed 50 MB × 3.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeStatus, StatusReport } from '../../runtime/status/types.js';
import { PROFILE_IMAGE } from '../sim/index.js';
import type { SimNode } from '../sim/index.js';
import { SECRET_KEY, runSimCli, startServer, startStatusSim, writePulseEnv } from './sim-helpers.js';
import type { StatusSim } from './sim-helpers.js';

let s: StatusSim;
let n: SimNode;
const outputs: string[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function status(): Promise<{ json: NodeStatus; text: string }> {
  // Both views at once: each waits out the same probes (a paused server answers no HTTP until curl's own timeout).
  const [j, t] = await Promise.all([runSimCli(s, ['model', 'status', '--node', 'spark2', '--json']), runSimCli(s, ['model', 'status', '--node', 'spark2'])]);
  outputs.push(j.stdout, j.stderr, t.stdout, t.stderr);
  const report = JSON.parse(j.stdout) as StatusReport;
  // status exits 7 (not-ready) when the node it shows is unhealthy (a plain or paused container serves no API): the
  // code follows the report's health words, which this test does not judge.
  assert.equal(j.code, report.allHealthy ? 0 : 7, j.stderr);
  assert.equal(t.code, j.code);
  // The table wraps long values onto indented continuation lines: join them, so a value reads as one line.
  return { json: report.nodes[0]!, text: t.stdout.replace(/\n {13}/g, ' ') };
}

/** A plain container under the recipe's name (`extra` docker run flags, `cmd` its command). */
function run(extra = '', cmd = 'sleep 300'): void {
  n.exec(`docker rm -f ${n.containerName} >/dev/null 2>&1; docker run -d --name ${n.containerName} ${extra} ${PROFILE_IMAGE} ${cmd} >/dev/null`);
}

async function until(what: string, fn: () => boolean, tries = 200): Promise<void> {
  for (let i = 0; i < tries && !fn(); i++) await sleep(25);
  assert.ok(fn(), what);
}
const inspect = (fmt: string) => n.exec(`docker container inspect --format '${fmt}' ${n.containerName} 2>/dev/null || true`).trim();

describe('status on each docker state and log config of the simulator', () => {
  before(async () => {
    s = await startStatusSim(2);
    n = s.sim.node('spark2');
    writePulseEnv(n);
  });
  after(async () => {
    for (const o of outputs) assert.ok(!o.includes(SECRET_KEY), 'the API key never reaches any output');
    await s?.stop();
  });

  test('an image vllm-qwen38:latest and a volume vllm-qwen38 are not the container: absent', async () => {
    n.addImage(`${n.containerName}:latest`);
    n.addVolume(n.containerName);
    assert.match(n.exec(`docker inspect --format '{{.Id}}' ${n.containerName}:latest; docker inspect ${n.containerName} >/dev/null && echo found`), /found/, 'docker inspect NAME finds the image');
    const r = await status();
    assert.equal(r.json.container?.exists, false);
    assert.equal(r.json.container?.state, 'absent');
    assert.equal(r.json.container?.image, null);
    assert.match(r.text, new RegExp(`container +${n.containerName}: no such container`));
  });

  test('a serving container: running, no exit to report; the default log config never rotates', async () => {
    startServer(n);
    const r = await status();
    assert.equal(r.json.container?.state, 'running');
    assert.equal(r.json.container?.exitMeaning, null);
    assert.equal(r.json.container?.restartCount, 0);
    assert.deepEqual(r.json.container?.logs, {
      driver: 'json-file', maxSize: null, maxFile: null, rotates: false, readable: true,
      summary: 'json-file without max-size: never rotated, the log grows without bound',
    });
    assert.match(r.text, /^ *logs +json-file without max-size: never rotated, the log grows without bound$/m);
  });

  test('paused: the state docker names, and still "running" to docker', async () => {
    n.docker('pause', n.containerName);
    const r = await status();
    n.docker('unpause', n.containerName);
    assert.equal(r.json.container?.state, 'paused');
    assert.equal(r.json.container?.running, true);
    assert.match(r.text, new RegExp(`container +${n.containerName} paused since`));
  });

  test('exited after docker kill: exit 137 in words', async () => {
    n.docker('kill', n.containerName);
    const r = await status();
    assert.equal(r.json.container?.state, 'exited');
    assert.equal(r.json.container?.exitCode, 137);
    assert.match(r.json.container?.exitMeaning ?? '', /^exit 137: killed by SIGKILL \(docker stop timed out and killed it, docker kill, or docker rm -f\)$/);
    assert.match(r.text, /; exit 137: killed by SIGKILL/);
  });

  test('restarting: the restart policy and RestartCount, with the last exit while it waits to restart', async () => {
    // The back-off doubles from 100 ms: after 6 restarts the container waits 6.4 s in `restarting`.
    run('--restart always', 'sh -c "sleep 0.05; exit 3"');
    await until('restarted six times', () => Number(inspect('{{.RestartCount}}')) >= 6, 600);
    await until('waiting to restart', () => inspect('{{.State.Status}}') === 'restarting', 600);
    const r = await status();
    assert.equal(r.json.container?.state, 'restarting');
    assert.equal(r.json.container?.running, true, 'docker counts a restarting container as running');
    assert.ok((r.json.container?.restartCount ?? 0) >= 6);
    assert.match(r.json.container?.exitMeaning ?? '', /^exit 3: the server failed/);
    assert.match(r.text, /; exit 3: the server failed; restarted \d+ time\(s\) by its restart policy/);
    assert.ok(r.json.warnings.some((w) => /is restarting: its restart policy restarted it \d+ time\(s\), last exit 3/.test(w)), r.json.warnings.join('; '));
    n.docker('rm', '-f', n.containerName);
    // Once it runs again docker has reset ExitCode to 0 (moby State.setRunning): no last exit is claimed then.
  });

  test('dead when a removal failed, with docker\'s error', async () => {
    run();
    const release = n.failRemoval();
    try {
      n.exec(`docker rm -f ${n.containerName} >/dev/null 2>&1 || true`);
      const dead = await status();
      assert.equal(dead.json.container?.state, 'dead');
      assert.match(dead.json.container?.error ?? '', /unable to remove filesystem .*operation not permitted/);
      assert.ok(dead.json.warnings.some((w) => /is dead: docker failed to remove it \(.*operation not permitted\); docker rm -f/.test(w)), dead.json.warnings.join('; '));
    } finally {
      release();
    }
    n.docker('rm', '-f', n.containerName);
  });

  test('log config: daemon log-opts merged with --log-opt, local defaults, none', async () => {
    await n.setDaemonLogConfig({ opts: { 'max-size': '50m', 'max-file': '3' } });
    run('--log-opt max-file=5');
    const merged = await status();
    assert.deepEqual({ ...merged.json.container?.logs, summary: undefined }, { driver: 'json-file', maxSize: '50m', maxFile: 5, rotates: true, readable: true, summary: undefined });
    assert.match(merged.text, /logs +json-file, rotated at 50m, 5 files kept/);
    await n.setDaemonLogConfig({ opts: { 'max-size': '10m' } });
    run();
    assert.match((await status()).json.container?.logs?.summary ?? '', /^json-file, one file: cut at 10m/);
    await n.setDaemonLogConfig(null);
    run('--log-driver local');
    const local = (await status()).json.container?.logs;
    assert.equal(local?.maxSize, '20m');
    assert.equal(local?.maxFile, 5);
    run('--log-driver none');
    const none = await status();
    assert.equal(none.json.container?.logs?.readable, false);
    assert.match(none.text, /logs +none: docker keeps no log \(docker logs fails\)/);
    assert.equal(none.json.kvCache.line, null);
    n.docker('rm', '-f', n.containerName);
  });
});
