import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ensureEmbeddedServer, runningEmbeddedServer, stopEmbeddedServer } from '../../cli/deploy-client/embedded-server.js';
import { configuredOrRunningServer, connectTemporal, uiLink } from '../../cli/deploy-client/temporal.js';
import { killEmbeddedServerOnExit, removeDir, tempDir, runCli } from '../helpers/cli.js';
import { freePortPair } from '../sim/ports.js';

let dir = '';
let port = 0;
const saved = { ...process.env };

before(async () => {
  dir = await tempDir('pulse-embedded-');
  killEmbeddedServerOnExit(dir);
  port = await freePortPair();
  process.env['PULSE_STATE_DIR'] = dir;
  process.env['PULSE_TEMPORAL_PORT'] = String(port);
  delete process.env['TEMPORAL_ADDRESS'];
});

after(async () => {
  await stopEmbeddedServer(dir);
  process.env = saved;
  await removeDir(dir);
});

test('status helper reports nothing and starts nothing before the first start', async () => {
  assert.equal(await configuredOrRunningServer({}), null);
  assert.equal(await runningEmbeddedServer(dir), null);
});

test('a configured address wins and is reported without starting anything', async () => {
  const t = await configuredOrRunningServer({ temporal: '127.0.0.1:1' }, { PULSE_TEMPORAL_UI: 'http://ui.example/' });
  assert.equal(t?.address, '127.0.0.1:1');
  assert.equal(t?.embedded, null);
  assert.equal(uiLink(t!, 'pulse-model-a', 'r1'), 'http://ui.example/namespaces/default/workflows/pulse-model-a/r1/history');
});

test('the embedded server starts, answers with the search attributes, and is reused', async () => {
  const t = await connectTemporal({});
  try {
    assert.equal(t.target.address, `127.0.0.1:${port}`);
    assert.equal(t.target.uiBase, `http://127.0.0.1:${port + 1000}`);
    const sa = await t.connection.operatorService.listSearchAttributes({ namespace: 'default' });
    for (const k of ['PulseNode', 'PulseProfile', 'PulseAction', 'PulseOutcome']) assert.ok(k in (sa.customAttributes ?? {}), k);
  } finally {
    await t.close();
  }
  const info = JSON.parse(await readFile(path.join(dir, 'temporal/server.json'), 'utf8')) as { pid: number; dbFile: string };
  assert.equal(info.dbFile, path.join(dir, 'temporal/dev.db'));
  const again = await ensureEmbeddedServer(dir);
  assert.equal(again.pid, info.pid, 'a second start reuses the running server');
  const seen = await configuredOrRunningServer({});
  assert.equal(seen?.embedded?.pid, info.pid);
});

test('a second pulse process reuses the server (history runs against it)', async () => {
  const before = await runningEmbeddedServer(dir);
  const r = await runCli(['model', 'history'], { PULSE_STATE_DIR: dir, PULSE_TEMPORAL_PORT: String(port) });
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await runningEmbeddedServer(dir))?.pid, before?.pid);
});

test('a foreign program on the port is refused with a clear message', async () => {
  const other = await tempDir('pulse-embedded-other-');
  try {
    // `dir`'s server holds `port`; a second state dir with the same port must not try to share it.
    await assert.rejects(ensureEmbeddedServer(other), /port \d+ on 127\.0\.0\.1 is in use by a program that pulse did not start/);
  } finally {
    await removeDir(other);
  }
});

test('after the server died, the next pulse starts a new one on the same SQLite file (the deploys are kept)', async () => {
  const old = await runningEmbeddedServer(dir);
  assert.ok(old);
  const t = await connectTemporal({});
  await t.client.workflow.start('upWorkflow', { taskQueue: 'pulse-embedded-test', workflowId: 'kept-across-restart', args: [] });
  await t.close();
  process.kill(old.pid, 'SIGKILL');
  while (await runningEmbeddedServer(dir)) await new Promise((r) => setTimeout(r, 100));
  const t2 = await connectTemporal({});
  try {
    assert.notEqual(t2.target.embedded?.pid, old.pid);
    const d = await t2.client.workflow.getHandle('kept-across-restart').describe();
    assert.equal(d.status.name, 'RUNNING');
    await t2.client.workflow.getHandle('kept-across-restart').terminate('test done');
  } finally {
    await t2.close();
  }
});
