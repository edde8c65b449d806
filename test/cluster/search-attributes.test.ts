/**
 * The first `pulse model up` in a namespace of a real cluster. Such a server answers from a namespace cache: a
 * namespace created a moment ago is "not found" there, and search attributes registered a moment ago are "not
 * mapped" there, until its refresh (seconds). pulse registers its search attributes, waits until the namespace maps
 * them, then starts: the first up works. The server here runs without pulse's dynamic config (a site's own server),
 * and with a namespace that allows fewer search attributes per workflow than pulse sets, to see a refused start say why in one line.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import { registerNamespace, startCluster } from '../helpers/cluster.js';
import type { Cluster } from '../helpers/cluster.js';
import { removeDir, runCli, simCliEnv, tempDir } from '../helpers/cli.js';
import { startSim } from '../sim/index.js';
import type { Sim } from '../sim/index.js';

describe('the first up in a fresh namespace of a cluster', () => {
  let cluster: Cluster;
  let sim: Sim;
  let dir = '';
  let base: NodeJS.ProcessEnv = {};
  let connection: Connection;

  before(async () => {
    dir = await tempDir('pulse-sa-');
    const dynamicConfig = path.join(dir, 'dynamicconfig.yaml');
    writeFileSync(dynamicConfig, [
      'frontend.enableServerVersionCheck:', '  - value: false',
      'frontend.searchAttributesNumberOfKeysLimit:', '  - value: 2', '    constraints: { namespace: "fewattrs" }', ''].join('\n'));
    [cluster, sim] = await Promise.all([startCluster({ env: { DYNAMIC_CONFIG_FILE_PATH: dynamicConfig } }), startSim({ nodes: ['spark1', 'spark2', 'spark3'], readyDelayMs: 300 })]);
    base = { ...(await simCliEnv(sim, dir)), TEMPORAL_ADDRESS: cluster.address };
    connection = await Connection.connect({ address: cluster.address });
  });
  after(async () => {
    await connection?.close();
    await sim?.stop();
    await cluster?.stop();
    await removeDir(dir);
  });

  const createNamespace = (name: string) => registerNamespace({ ...cluster.env, DEFAULT_NAMESPACE: name }, path.join(cluster.dir, 'setup.log'));
  const envFor = (namespace: string, node: string): NodeJS.ProcessEnv => ({ ...base, TEMPORAL_NAMESPACE: namespace, PULSE_STATE_DIR: path.join(dir, `state-${namespace}-${node}`) });

  it('a namespace the frontend already caches: the attributes pulse registers are mapped before the start', async () => {
    await createNamespace('cached');
    // The frontend has the namespace in its cache (as after any earlier call), without pulse's attributes.
    for (;;) {
      try {
        await connection.workflowService.countWorkflowExecutions({ namespace: 'cached' });
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    const r = await runCli(['model', 'up', 'best', '--node', 'spark1'], envFor('cached', 'spark1'));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /up best on spark1: ok, node up/);
  });

  it('a namespace created a moment ago: pulse waits until the frontend knows it', async () => {
    await createNamespace('justmade');
    const r = await runCli(['model', 'up', 'best', '--node', 'spark2'], envFor('justmade', 'spark2'));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /up best on spark2: ok, node up/);
    const h = await runCli(['model', 'history', '--json'], envFor('justmade', 'spark2'));
    assert.deepEqual((JSON.parse(h.stdout) as { node: string; action: string }[]).map((x) => [x.node, x.action]), [['spark2', 'up']]);
  });

  it('a start the server refuses says the server\'s reason in one line, without --verbose', async () => {
    await createNamespace('fewattrs');
    const r = await runCli(['model', 'up', 'best', '--node', 'spark3'], envFor('fewattrs', 'spark3'));
    assert.equal(r.code, 10, r.stdout + r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^pulse: cannot start up best on spark3: INVALID_ARGUMENT: .*search attributes.*limit/i);
    assert.doesNotMatch(r.stderr, /Failed to start Workflow/);
    assert.equal(sim.node('spark3').startShCalls().length, 0);
  });
});
