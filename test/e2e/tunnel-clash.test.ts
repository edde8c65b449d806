/**
 * One tunnel port clash no longer stops every tunnel (issue 27, item 9), through the CLI on simulator nodes:
 * nodes.json refuses a gatewayTunnel.localPort that is the port of a server on the gateway host (spark1, the gateway
 * node) with a `file:path:` line; and with spark2 and spark3 both tunnelled, a port that another program holds
 * fails spark3's tunnel alone: `pulse tunnel` keeps running, spark2's tunnel comes up, the gateway backend file says
 * why spark3's endpoint is disabled, and once the port is free spark3's tunnel binds by itself.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import type { Sim } from '../sim/index.js';
import { runCli, startCli, waitForOutput } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { freePort } from '../sim/ports.js';
import { endpointOf, tunnelHealthOf } from '../helpers/tunnel.js';
import { until } from '../helpers/until.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
let tunnel: ReturnType<typeof startCli> | null = null;
const stateDir = () => path.join(dir, 'state');

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-tunnel-clash-', { nodes: ['spark1', 'spark2', 'spark3'], readyDelayMs: 300 }));
});

after(async () => {
  if (tunnel && tunnel.child.exitCode === null) tunnel.child.kill('SIGKILL');
  await stopSimCli(sim, dir);
});

/** nodes.json with `ports` as the nodes' gatewayTunnel.localPort (spark1 stays the gateway node). */
function writeTunnels(ports: Record<string, number>): void {
  (sim as Sim).writeNodesJson(env['PULSE_NODES'] as string, {
    protected: [],
    transform: (json) => {
      const nodes = json['nodes'] as Record<string, Record<string, unknown>>;
      for (const [n, localPort] of Object.entries(ports)) (nodes[n] as Record<string, unknown>)['gatewayTunnel'] = { localPort };
      return json;
    },
  });
}

test('nodes.json refuses a tunnel port that is the port of the gateway node\'s server, naming the file and the path', async () => {
  const spark1Port = (sim as Sim).node('spark1').vllmPort;
  writeTunnels({ spark2: spark1Port });
  const want = new RegExp(`^pulse: ${(env['PULSE_NODES'] as string).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: nodes\\.spark2\\.gatewayTunnel\\.localPort: ${spark1Port} is also nodes\\.spark1\\.env\\.PORT, the port spark1's server listens on on the gateway host`, 'm');
  for (const args of [['tunnel'], ['model', 'status', '--no-http']]) {
    const r = await runCli(args, env);
    assert.equal(r.code, 3, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, want);
  }
});

test('a tunnel whose port another program holds fails alone: the others run, the gateway file says why, and it binds once the port is free', async () => {
  const [p2, p3] = [await freePort(), await freePort()];
  writeTunnels({ spark2: p2, spark3: p3 });
  // Another program on the gateway host holds spark3's port.
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(p3, '127.0.0.1', resolve));
  let held = true;
  try {
    tunnel = startCli(['tunnel', '--probe-interval-s', '0.3'], env);
    const died = () => (tunnel && tunnel.child.exitCode !== null ? `pulse tunnel exited ${tunnel.child.exitCode}:\n${tunnel.output()}` : null);
    const detail = () => `${JSON.stringify(tunnelHealthOf(stateDir()))}\n${tunnel?.output() ?? ''}`;
    await waitForOutput(tunnel, /spark2: ssh link up, 127\.0\.0\.1:\d+ → 127\.0\.0\.1:\d+ on spark2/, 60_000);
    assert.match(tunnel.output(), new RegExp(`spark3: cannot listen on 127\\.0\\.0\\.1:${p3}: listen EADDRINUSE[^\\n]*; this tunnel alone is down, trying again in`));
    await until('spark3 disabled for its port', () => /cannot listen/.test(endpointOf(stateDir(), 'spark3')?.reason ?? ''), 30_000, { died, detail });
    const e3 = endpointOf(stateDir(), 'spark3');
    assert.equal(e3?.enabled, false);
    assert.match(e3?.reason ?? '', new RegExp(`^the tunnel cannot listen on 127\\.0\\.0\\.1:${p3}: listen EADDRINUSE: address already in use 127\\.0\\.0\\.1:${p3} \\(another program holds the port: stop it, or change gatewayTunnel\\.localPort\\)$`));
    await until('spark2\'s tunnel up beside it', () => tunnelHealthOf(stateDir())?.nodes['spark2']?.connected === true && /no answer|no probe/.test(endpointOf(stateDir(), 'spark2')?.reason ?? ''), 30_000, { died, detail });
    assert.equal(tunnelHealthOf(stateDir())?.nodes['spark2']?.listening, true);
    assert.doesNotMatch(endpointOf(stateDir(), 'spark2')?.reason ?? '', /cannot listen|link is down/);
    assert.equal(tunnel.child.exitCode, null, 'pulse tunnel still runs');

    await new Promise<void>((resolve) => holder.close(() => resolve()));
    held = false;
    await until('spark3\'s tunnel binds once the port is free', () => tunnelHealthOf(stateDir())?.nodes['spark3']?.connected === true, 60_000, { died, detail });
    assert.doesNotMatch(endpointOf(stateDir(), 'spark3')?.reason ?? '', /cannot listen/);
    tunnel.child.kill('SIGTERM');
    const r = await tunnel.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
  } finally {
    if (held) holder.close();
  }
});
