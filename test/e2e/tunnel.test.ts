/**
 * `pulse tunnel` through the product on simulator nodes: spark2's server listens on 127.0.0.1 (BIND stays
 * loopback); the tunnel on the gateway host forwards a local port over a verified ssh link. After a real `up` the
 * gateway backend file gives spark2 the tunnel's URL, enabled; a killed ssh link comes back and the endpoint is
 * enabled again; a changed host key is refused and disables the endpoint with the reason; a clean stop disables it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Sim } from '../sim/index.js';
import { runCli, startCli, waitForOutput } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { freePort } from '../sim/ports.js';
import { endpointOf, servingOf, tunnelHealthOf, writeTunnelNodesJson } from '../helpers/tunnel.js';
import { until } from '../helpers/until.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
let port = 0;
let tunnel: ReturnType<typeof startCli> | null = null;
const stateDir = () => path.join(dir, 'state');
const died = () => (tunnel && tunnel.child.exitCode !== null ? `pulse tunnel exited ${tunnel.child.exitCode}:\n${tunnel.output()}` : null);
const wait = (what: string, ok: () => boolean) => until(what, ok, 60_000, { died, detail: () => `${JSON.stringify(endpointOf(stateDir(), 'spark2'))}\n${tunnel?.output() ?? ''}` });

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).once('error', reject);
  });
}

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-tunnel-', { nodes: ['spark1', 'spark2'], readyDelayMs: 300 }));
  port = await freePort();
  writeTunnelNodesJson(sim, env['PULSE_NODES'] as string, 'spark2', port);
});

after(async () => {
  if (tunnel && tunnel.child.exitCode === null) tunnel.child.kill('SIGKILL');
  await stopSimCli(sim, dir);
});

test('the tunnel brings spark2 (BIND 127.0.0.1) to an enabled endpoint with the tunnel URL after an up', async () => {
  tunnel = startCli(['tunnel', '--probe-interval-s', '0.3'], env);
  await waitForOutput(tunnel, /spark2: ssh link up, 127\.0\.0\.1:\d+ → 127\.0\.0\.1:\d+ on spark2/, 60_000);
  const url = `http://127.0.0.1:${port}/v1`;
  // The file may still hold the write from before the link came up ("the tunnel's ssh link is down"): wait for the
  // probe's own verdict.
  const noAnswer = /no answer through the tunnel|no probe through it/;
  await wait('spark2 disabled: no server answers yet', () => endpointOf(stateDir(), 'spark2')?.enabled === false && noAnswer.test(endpointOf(stateDir(), 'spark2')?.reason ?? ''));
  assert.equal(endpointOf(stateDir(), 'spark2')?.baseUrl, url);
  assert.match(endpointOf(stateDir(), 'spark2')?.reason ?? '', noAnswer);

  const up = await runCli(['model', 'up', 'best', '--node', 'spark2'], env);
  assert.equal(up.code, 0, up.stdout + up.stderr);
  await wait('spark2 enabled through the tunnel', () => endpointOf(stateDir(), 'spark2')?.enabled === true);
  assert.deepEqual(endpointOf(stateDir(), 'spark2'), { name: 'spark2', baseUrl: url, enabled: true });
  const models = await get(`${url}/models`);
  assert.equal(models.status, 200, 'the gateway-side URL reaches spark2\'s server');
  assert.match(models.body, /qwen38/);
  const cfg = JSON.parse(readFileSync(env['PULSE_NODES'] as string, 'utf8')) as { nodes: Record<string, { env: { BIND: string } }> };
  assert.equal(cfg.nodes['spark2']?.env.BIND, '127.0.0.1', 'BIND stays on loopback: the server is not opened to the LAN');

  const status = await runCli(['model', 'status', '--node', 'spark2', '--no-http', '--json'], env);
  const t = (JSON.parse(status.stdout) as { nodes: { tunnel: { up: boolean; url: string } }[] }).nodes[0]?.tunnel;
  assert.deepEqual([t?.up, t?.url], [true, url], status.stdout + status.stderr);
});

test('a killed ssh link reconnects and the endpoint is enabled again', async () => {
  assert.equal(tunnelHealthOf(stateDir())?.nodes['spark2']?.reconnects, 0);
  (sim as Sim).node('spark2').killSshSessions();
  await waitForOutput(tunnel!, /spark2: ssh link lost: .*reconnecting in/, 30_000);
  await wait('the link back', () => (tunnelHealthOf(stateDir())?.nodes['spark2']?.reconnects ?? 0) >= 1);
  await wait('spark2 enabled again', () => endpointOf(stateDir(), 'spark2')?.enabled === true && tunnelHealthOf(stateDir())?.nodes['spark2']?.connected === true);
  assert.equal((await get(`http://127.0.0.1:${port}/health`)).status, 200);
});

test('a changed host key is refused: the endpoint is disabled with the reason, and a fixed known_hosts brings it back', async () => {
  const s = sim as Sim;
  s.writeKnownHosts(s.knownHostsPath, { wrongKey: { aliases: ['spark2'], key: s.foreignHostKey } });
  s.node('spark2').killSshSessions();
  await wait('spark2 disabled by the refused host key', () => /HOST KEY CHANGED/.test(endpointOf(stateDir(), 'spark2')?.reason ?? ''));
  assert.equal(endpointOf(stateDir(), 'spark2')?.enabled, false);
  assert.match(tunnel!.output(), /spark2: .*HOST KEY CHANGED .*Refusing \(possible man-in-the-middle\)/);
  // Each lost link had served (a probe answered through it), so each retry starts at the first backoff step again.
  assert.equal([...tunnel!.output().matchAll(/spark2: ssh link lost: [^\n]*reconnecting in 0\.25 s/g)].length, 2, tunnel!.output());
  s.writeKnownHosts(s.knownHostsPath);
  await wait('spark2 enabled after the fix', () => endpointOf(stateDir(), 'spark2')?.enabled === true);
});

test('a host key marked @revoked while the tunnel runs: the link closes within a probe and the endpoint is disabled', async () => {
  const s = sim as Sim;
  const file = s.knownHostsPath;
  const good = readFileSync(file, 'utf8');
  const line = good.split('\n').find((l) => l.startsWith(`[${s.node('spark2').address}]`));
  assert.ok(line, 'the sim writes one known_hosts line per node');
  const before = tunnel!.output().length;
  // The live link is not cut: only the file changes, and the tunnel must notice it by itself.
  writeFileSync(file, `${good}@revoked ${line}\n`);
  await wait('spark2 disabled by the revoked key', () => /revoked/.test(endpointOf(stateDir(), 'spark2')?.reason ?? ''));
  assert.match(tunnel!.output().slice(before), /spark2: known_hosts no longer accepts the host key of spark2: host key SHA256:\S+ of \S+ is marked @revoked in [^;]+; closing the ssh link/);
  assert.equal(tunnelHealthOf(stateDir())?.nodes['spark2']?.connected, false);
  await assert.rejects(get(`http://127.0.0.1:${port}/health`), 'no connection goes through a link known_hosts took back');
  writeFileSync(file, good);
  await wait('spark2 enabled once the line is gone', () => endpointOf(stateDir(), 'spark2')?.enabled === true);
});

test('a clean stop disables the tunnelled endpoint', async () => {
  tunnel!.child.kill('SIGTERM');
  const r = await tunnel!.done;
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(endpointOf(stateDir(), 'spark2')?.enabled, false);
  assert.match(endpointOf(stateDir(), 'spark2')?.reason ?? '', /the tunnel \(pid \d+\) stopped at/);
});

test('a rollout over spark2 then spark1 with the tunnel (default probe timing) keeps an endpoint serving at every sample', async () => {
  tunnel = startCli(['tunnel'], env);
  await wait('spark2 enabled through the restarted tunnel', () => endpointOf(stateDir(), 'spark2')?.enabled === true);
  const one = await runCli(['model', 'up', 'best', '--node', 'spark1'], env);
  assert.equal(one.code, 0, one.stdout + one.stderr);
  await wait('both endpoints serving', () => servingOf(stateDir()).length === 2);
  const samples: string[][] = [];
  const watcher = setInterval(() => samples.push(servingOf(stateDir())), 50);
  const r = await runCli(['model', 'up', 'datagen', '--node', 'spark2,spark1'], env).finally(() => clearInterval(watcher));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.doesNotMatch(r.stdout + r.stderr, /REFUSED|no enabled endpoint/);
  assert.match(r.stdout, /rollout up datagen: SUCCEEDED/);
  assert.ok(samples.length > 20, `the watcher sampled the file throughout (${samples.length} samples)`);
  const empty = samples.findIndex((s) => s.length === 0);
  assert.equal(empty, -1, `sample ${empty} of ${samples.length} had no serving endpoint`);
  for (const n of ['spark1', 'spark2']) assert.ok(samples.some((s) => !s.includes(n)), `${n} went out of service during its step`);
});
