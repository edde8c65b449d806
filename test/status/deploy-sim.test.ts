/**
 * The deploy in progress, shown only when a Temporal server is configured (here: a real dev server) and never
 * started by status itself. The workflow holding spark2 has no worker, so its progress query cannot answer: status
 * still shows the holder, its action, profile, elapsed time and UI link, without waiting for a dead worker.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { SA_ACTION, SA_NODE, SA_PROFILE, workflowIdFor } from '../../workflows/definitions.js';
import type { StatusReport } from '../../runtime/status/types.js';
import { startDevServer } from '../helpers/dev-server.js';
import type { DevServer } from '../helpers/dev-server.js';
import { runSimCli, startStatusSim } from './sim-helpers.js';
import type { StatusSim } from './sim-helpers.js';

let server: DevServer;
let s: StatusSim;
let connection: Connection | undefined;

function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

describe('status shows the deploy that holds a node', () => {
  before(async () => {
    const devServer = startDevServer();
    const sim = startStatusSim(2);
    // Keep what started even if the other fails, so after() can stop it.
    void devServer.then((x) => (server = x), () => undefined);
    void sim.then((x) => (s = x), () => undefined);
    [server, s] = await Promise.all([devServer, sim]);
    // A hang here (a loaded machine) must fail the suite, not keep the dev server alive forever.
    connection = await within(60_000, Connection.connect({ address: server.address, connectTimeout: '30s' }), 'connect to the dev server');
    const client = new Client({ connection, namespace: server.namespace });
    await within(60_000, client.workflow.start('upWorkflow', {
      taskQueue: 'pulse-status-test-nobody-polls',
      workflowId: workflowIdFor('spark2'),
      args: [{}],
      typedSearchAttributes: [
        { key: SA_NODE, value: 'spark2' },
        { key: SA_PROFILE, value: 'best' },
        { key: SA_ACTION, value: 'up' },
      ],
    }), 'start the holding workflow');
  });
  after(async () => {
    await connection?.close().catch(() => undefined);
    await Promise.all([server?.stop(), s?.stop()]);
  });

  test('without a configured or running server, status starts none and says why deploys are missing', async () => {
    const r = await runSimCli(s, ['model', 'status', '--no-http', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as StatusReport;
    assert.match(report.notes.join('\n'), /no Temporal server is configured or running/);
    assert.equal(existsSync(path.join(s.stateDir, 'temporal')), false, 'no embedded server was started');
  });

  test('with TEMPORAL_ADDRESS: the holder of spark2 with action, profile, elapsed and UI link; none on spark1', async () => {
    const r = await runSimCli(s, ['model', 'status', '--no-http', '--json'], { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace, PULSE_TEMPORAL_UI: 'http://ui.test:8233' });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as StatusReport;
    assert.deepEqual(report.notes, []);
    const [n1, n2] = report.nodes;
    assert.equal(n1?.deploy, null);
    assert.equal(n2?.deploy?.workflowId, 'pulse-model-spark2');
    assert.equal(n2?.deploy?.action, 'up');
    assert.equal(n2?.deploy?.profile, 'best');
    assert.equal(typeof n2?.deploy?.elapsedS, 'number');
    assert.match(n2?.deploy?.uiUrl ?? '', /^http:\/\/ui\.test:8233\/namespaces\/default\/workflows\/pulse-model-spark2\//);
    // Nobody polls its task queue: status names the deploy as one that no worker runs (issue 18, item 4).
    assert.equal(n2?.deploy?.unserved, 'no worker polls its task queue pulse-status-test-nobody-polls');
    assert.ok(n2?.warnings.includes('deploy running, no worker polls its task queue pulse-status-test-nobody-polls — start `pulse worker` (or `pulse model watch --node spark2`, which provides one)'), JSON.stringify(n2?.warnings));
    const table = await runSimCli(s, ['model', 'status', '--no-http', '--wide'], { TEMPORAL_ADDRESS: server.address, PULSE_TEMPORAL_UI: 'http://ui.test:8233' });
    assert.match(table.stdout, /deploy +pulse-model-spark2 up best/);
    assert.match(table.stdout.replace(/\n\s+/g, ' '), /warning +deploy running, no worker polls its task queue pulse-status-test-nobody-polls — start `pulse worker`/);
  });
});
