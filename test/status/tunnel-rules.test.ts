/** The gateway backend file's rules for a node behind `pulse tunnel` (runtime/gateway/tunnel/health.ts, runtime/gateway/gateway.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildFragment, publishFragment } from '../../runtime/gateway/gateway.js';
import { parseNodesConfig } from '../../runtime/config/nodes.js';
import { fleetOf } from '../../runtime/plan/plan.js';
import { tunnelSpecs } from '../../runtime/gateway/tunnel/run.js';
import { writeTunnelHealth, type TunnelHealth, type TunnelNodeHealth, type TunnelView } from '../../runtime/gateway/tunnel/health.js';
import type { FleetEntry, NodeState } from '../../runtime/model/index.js';
import { fleetEntry, nodeState, tempDir } from './fixtures.js';

const URL = 'http://127.0.0.1:18002/v1';
const tunnelled: FleetEntry = { node: 'spark2', gatewayUrl: 'http://10.0.0.2:8000/v1', reachable: false, tunnel: { localPort: 18002, url: URL } };

function nodeHealth(over: Partial<TunnelNodeHealth> = {}): TunnelNodeHealth {
  return {
    localPort: 18002, remote: '127.0.0.1:8000', listening: true, connected: true, connectedSince: '2026-09-23T10:00:00Z',
    probe: { ok: true, at: '2026-09-23T10:00:01Z', detail: 'GET /health: 200' }, lastError: null, lastErrorAt: null, reconnects: 0, ...over,
  };
}

function view(nodes: Record<string, TunnelNodeHealth>, over: Partial<TunnelView> = {}, top: Partial<TunnelHealth> = {}): TunnelView {
  return { health: { pid: process.pid, startedAt: 'a', updatedAt: 'b', nodes, ...top }, running: true, damaged: null, ...over };
}

const cases: { name: string; view: TunnelView; state?: NodeState['state']; reason?: RegExp }[] = [
  { name: 'tunnel up, probe answered, state up', view: view({ spark2: nodeHealth() }) },
  { name: 'tunnel up, no saved state', view: view({ spark2: nodeHealth() }), state: undefined },
  { name: 'no tunnel file', view: { health: null, running: false, damaged: null }, reason: /no tunnel runs: start `pulse tunnel`/ },
  { name: 'damaged file', view: { health: null, running: false, damaged: 'x: bad' }, reason: /health file cannot be read \(x: bad\)/ },
  { name: 'writer dead', view: view({ spark2: nodeHealth() }, { running: false }), reason: /is not running \(last update b\)/ },
  { name: 'clean stop', view: view({ spark2: nodeHealth() }, { running: false }, { stoppedAt: 'c' }), reason: /stopped at c/ },
  { name: 'node not served', view: view({}), reason: /does not serve this node/ },
  { name: 'other port', view: view({ spark2: nodeHealth({ localPort: 18003 }) }), reason: /listens on 127\.0\.0\.1:18003, nodes\.json says 18002/ },
  { name: 'link down', view: view({ spark2: nodeHealth({ connected: false, lastError: 'HOST KEY CHANGED for [127.0.0.22]:2222' }) }), reason: /ssh link is down: HOST KEY CHANGED/ },
  { name: 'no probe yet', view: view({ spark2: nodeHealth({ probe: null }) }), reason: /no probe through it has answered yet/ },
  { name: 'probe failed', view: view({ spark2: nodeHealth({ probe: { ok: false, at: 'x', detail: 'GET /health: socket hang up' } }) }), reason: /no answer through the tunnel: GET \/health: socket hang up/ },
  { name: 'tunnel up but state down', view: view({ spark2: nodeHealth() }), state: 'down', reason: /^state down/ },
];

for (const c of cases) {
  test(`tunnel rule: ${c.name} → ${c.reason ? 'disabled' : 'enabled'}`, () => {
    const states: Record<string, NodeState> = { spark1: nodeState('spark1') };
    const state = 'state' in c ? c.state : 'up';
    if (state) states['spark2'] = nodeState('spark2', { state });
    const { fragment } = buildFragment([fleetEntry('spark1'), tunnelled], states, {}, c.view);
    const ep = fragment.models[0].endpoints[1];
    assert.equal(ep?.baseUrl, URL, 'the endpoint always carries the tunnel URL, never the LAN address');
    assert.equal(ep?.enabled, !c.reason);
    if (c.reason) assert.match(ep?.reason ?? '', c.reason);
  });
}

test('nodes.json gatewayTunnel gives the fleet entry the loopback tunnel URL and the tunnel spec BIND:PORT on the node', () => {
  const text = JSON.stringify({
    nodes: {
      spark1: { host: 'local', env: { HF_HOME: '/hf', BIND: '127.0.0.1', PORT: '8000' }, gatewayUrl: 'http://127.0.0.1:8000/v1', recipes: {} },
      spark2: { host: 'ssh', ssh: 'spark2', env: { HF_HOME: '/hf', BIND: '127.0.0.1', PORT: '8001' }, gatewayUrl: 'http://10.0.0.2:8001/v1', gatewayTunnel: { localPort: 18002 }, recipes: {} },
    },
  });
  const config = parseNodesConfig(text, 'n.json');
  assert.deepEqual(fleetOf(config)[1], { node: 'spark2', gatewayUrl: 'http://10.0.0.2:8001/v1', reachable: false, tunnel: { localPort: 18002, url: 'http://127.0.0.1:18002/v1' } });
  assert.equal(fleetOf(config)[0]?.tunnel, undefined);
  assert.deepEqual(tunnelSpecs(config), [{ node: 'spark2', target: { name: 'spark2', host: 'ssh', ssh: 'spark2' }, localPort: 18002, remoteHost: '127.0.0.1', remotePort: 8001 }]);
});

test('publishFragment reads tunnel.json: a live tunnel enables, a damaged file disables with the reason', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const health: TunnelHealth = { pid: process.pid, startedAt: 'a', updatedAt: 'b', nodes: { spark2: nodeHealth() } };
    writeTunnelHealth(dir, health);
    const fleet = [fleetEntry('spark1'), tunnelled];
    assert.equal((await publishFragment(dir, fleet)).endpoints[1]?.enabled, true);
    writeFileSync(path.join(dir, 'tunnel.json'), '{not json');
    const r = await publishFragment(dir, fleet);
    assert.equal(r.endpoints[1]?.enabled, false);
    assert.match(r.endpoints[1]?.reason ?? '', /health file cannot be read/);
  } finally {
    cleanup();
  }
});
