/**
 * `pulse tunnel` reads nodes.json again at every probe, so a link whose node nodes.json now sends elsewhere closes.
 * A nodes.json the operator is still editing (a typo, a half-saved file) chooses no other link: it must not close
 * the live link of every tunnel, cut the requests in flight through it and disable every tunnelled endpoint until the
 * file parses again. The tunnel warns and keeps the link it has.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Sim } from '../sim/index.js';
import { startCli, waitForOutput } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { freePort } from '../sim/ports.js';
import { tunnelHealthOf, writeTunnelNodesJson } from '../helpers/tunnel.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
let tunnel: ReturnType<typeof startCli> | null = null;

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-tunnel-typo-', { nodes: ['spark1', 'spark2'], readyDelayMs: 300 }));
  writeTunnelNodesJson(sim, env['PULSE_NODES'] as string, 'spark2', await freePort());
});

after(async () => {
  if (tunnel && tunnel.child.exitCode === null) tunnel.child.kill('SIGKILL');
  await stopSimCli(sim, dir);
});

test('a typo saved into nodes.json while the tunnel runs does not close the live ssh link', async () => {
  tunnel = startCli(['tunnel', '--probe-interval-s', '0.3'], env);
  await waitForOutput(tunnel, /spark2: ssh link up/, 60_000);
  const file = env['PULSE_NODES'] as string;
  const good = readFileSync(file, 'utf8');
  const before = tunnel.output().length;
  writeFileSync(file, good.replace(/\}\s*$/, ',}\n')); // a trailing comma: not JSON
  try {
    // Ten probe intervals: what the tunnel does with the link it has while the file does not parse. (A fixed wait:
    // the thing shown is that nothing happens.)
    await new Promise((r) => setTimeout(r, 3_000));
    const said = tunnel.output().slice(before);
    assert.doesNotMatch(said, /closing the ssh link/, `the live link was closed over a nodes.json that does not parse:\n${said}`);
    assert.equal(tunnelHealthOf(path.join(dir, 'state'))?.nodes['spark2']?.connected, true, said);
  } finally {
    writeFileSync(file, good);
  }
});
