/**
 * mTLS: the native server (deploy/native/temporal.yaml) with frontend TLS and required client certificates, all
 * made by the test with openssl (test/helpers/certs.ts). `pulse worker` and `pulse model up` connect with Temporal's
 * usual client environment variables (TEMPORAL_TLS_CLIENT_CERT_PATH ...; pulse's older TEMPORAL_TLS_CERT/KEY/CA
 * still work) and complete a deploy on a sim node. A client without a certificate, with one from another CA, or
 * without TLS at all is refused, and pulse says so in one line that names the TLS problem and the variable to check.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { quietIpServernameWarning, readTlsEnv } from '../../cli/deploy-client/temporal-tls.js';
import { GATEWAY_TASK_QUEUE, TASK_QUEUE } from '../../workflows/definitions.js';
import { makeCerts, type TestCerts } from '../helpers/certs.js';
import { removeDir, runCli, tempDir } from '../helpers/cli.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { spawnWorker, waitForPolls, type WorkerProc } from '../multi-worker/workers.js';
import { startSim, type Sim } from '../sim/index.js';

/** Server side: frontend certificate, client CA, and the system worker's own client certificate. */
function serverTls(c: TestCerts): Record<string, string> {
  return {
    TEMPORAL_TLS_FRONTEND_CERT: c.server.cert, TEMPORAL_TLS_FRONTEND_KEY: c.server.key,
    TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true', TEMPORAL_TLS_CLIENT_CA_CERT: c.ca, TEMPORAL_TLS_SERVER_CA_CERT: c.ca,
    TEMPORAL_TLS_SYSTEM_WORKER_CERT: c.server.cert, TEMPORAL_TLS_SYSTEM_WORKER_KEY: c.server.key,
  };
}

/** Client side, Temporal's names (the temporal CLI and the SDKs' environment configuration read the same). */
function clientTls(c: TestCerts): Record<string, string> {
  return { TEMPORAL_TLS_SERVER_CA_CERT_PATH: c.ca, TEMPORAL_TLS_CLIENT_CERT_PATH: c.client.cert, TEMPORAL_TLS_CLIENT_KEY_PATH: c.client.key };
}

/** The lines pulse wrote on stderr (a refusal must be exactly one, with no stack trace). */
const lines = (s: string): string[] => s.split('\n').filter((l) => l.trim() !== '');

describe('mTLS: frontend TLS with required client certificates', () => {
  let certs: TestCerts;
  let cluster: Cluster;
  let sim: Sim;
  let dir: string;
  let env: Record<string, string>;
  let worker: WorkerProc | null = null;

  before(async () => {
    quietIpServernameWarning(); // this test process's own TLS client, like the CLI's
    certs = await makeCerts();
    dir = await tempDir('pulse-mtls-');
    [cluster, sim] = await Promise.all([
      startCluster({ env: { ...serverTls(certs), ...clientTls(certs) }, connectOptions: { tls: readTlsEnv(clientTls(certs)).tls } }),
      startSim({ nodes: ['spark2'], readyDelayMs: 300 }),
    ]);
    const nodes = path.join(dir, 'nodes.json');
    sim.writeNodesJson(nodes, { protected: [] });
    // No TLS setting of this test process leaks into the CLI runs: each run gets exactly the variables it names.
    env = { ...sim.env(), PULSE_NODES: nodes, PULSE_STATE_DIR: path.join(dir, 'state'), TEMPORAL_ADDRESS: cluster.address, NO_COLOR: '1' };
  });

  after(async () => {
    await worker?.kill('SIGKILL');
    await cluster?.stop();
    await sim?.stop();
    await removeDir(dir);
    await certs?.remove();
  });

  it('pulse worker and pulse model up connect with the TEMPORAL_TLS_* variables and complete a deploy', async () => {
    const connection = await Connection.connect({ address: cluster.address, tls: readTlsEnv(clientTls(certs)).tls });
    try {
      worker = spawnWorker([], { ...env, ...clientTls(certs) });
      await waitForPolls(new Client({ connection }), worker, [TASK_QUEUE, GATEWAY_TASK_QUEUE]);
    } finally {
      await connection.close();
    }
    const r = await runCli(['model', 'up', 'best', '--node', 'spark2'], { ...env, ...clientTls(certs) });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /up best on spark2: ok, node up/);
    assert.doesNotMatch(r.stdout, /running one in this process/, 'the TLS worker served the deploy');
    assert.equal(r.stderr, '', 'nothing on stderr (no TLS warning either)');
    assert.equal(sim.node('spark2').startShCalls().length, 1);
  });

  it("with no worker running, the CLI's in-process worker connects with the same settings", async () => {
    await worker?.kill('SIGKILL');
    worker = null;
    const r = await runCli(['model', 'up', 'datagen', '--node', 'spark2'], { ...env, ...clientTls(certs) });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /running one in this process until the deploy ends/);
    assert.match(r.stdout, /up datagen on spark2: ok, node up/);
    assert.equal(r.stderr, '');
  });

  it("pulse's older TEMPORAL_TLS_CERT/KEY/CA names still connect", async () => {
    const r = await runCli(['model', 'history', '--node', 'spark2', '--wide'], { ...env, TEMPORAL_TLS_CA: certs.ca, TEMPORAL_TLS_CERT: certs.client.cert, TEMPORAL_TLS_KEY: certs.client.key });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /pulse-model-spark2/);
  });

  const refusals: [string, (c: TestCerts) => Record<string, string>, RegExp][] = [
    ['no client certificate', (c) => ({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: c.ca }),
      /^pulse: TLS: the Temporal server at \S+ requires a client certificate: set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH$/],
    ['a client certificate from another CA', (c) => ({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: c.ca, TEMPORAL_TLS_CLIENT_CERT_PATH: c.otherClient.cert, TEMPORAL_TLS_CLIENT_KEY_PATH: c.otherClient.key }),
      /^pulse: TLS: the Temporal server at \S+ refused the client certificate in TEMPORAL_TLS_CLIENT_CERT_PATH \(TLS alert "unknown ca"\)/],
    ['no TLS at all', () => ({}), /^pulse: TLS: the Temporal server at \S+ requires TLS: set TEMPORAL_TLS=true/],
    ['no CA for the server certificate', (c) => ({ TEMPORAL_TLS_CLIENT_CERT_PATH: c.client.cert, TEMPORAL_TLS_CLIENT_KEY_PATH: c.client.key }),
      /^pulse: TLS: cannot verify the certificate of the Temporal server at \S+ \(.+\): set TEMPORAL_TLS_SERVER_CA_CERT_PATH to the CA that signed it$/],
  ];

  it('a refused client gets one line naming the TLS problem and the variable, from the CLI and from pulse worker', async () => {
    await Promise.all(refusals.map(async ([what, vars, line]) => {
      const [cli, w] = await Promise.all([
        runCli(['model', 'history', '--node', 'spark2'], { ...env, ...vars(certs) }),
        (async () => {
          const p = spawnWorker([], { ...env, ...vars(certs) });
          const end = await p.exited;
          return { code: end.code, stderr: p.stderr() };
        })(),
      ]);
      for (const [who, r] of [['pulse model history', cli], ['pulse worker', w]] as const) {
        assert.notEqual(r.code, 0, `${who}, ${what}: must fail`);
        assert.equal(lines(r.stderr).length, 1, `${who}, ${what}: one line, got:\n${r.stderr}`);
        assert.match(lines(r.stderr)[0] ?? '', line, `${who}, ${what}`);
      }
    }));
  });
});
