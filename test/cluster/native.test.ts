/**
 * The native production server as docs/PRODUCTION.md "C. native" runs it, started by test/helpers/cluster.ts from
 * the files under deploy/native: PostgreSQL with password auth, both schemas migrated by temporal-setup.sh, the
 * built temporal-server on deploy/native/temporal.yaml, the namespace registered with the compose retention.
 * A second `temporal-setup.sh schema` and `namespace` (a restarted unit) change nothing; the server survives a
 * restart with its database; PostgreSQL takes no connection without the password, and the server's role is no
 * superuser (it owns the two databases it created).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import { nativeSettings } from '../deploy/native-files.js';
import { postgresBinDir, registerNamespace, setupSchema, startCluster } from '../helpers/cluster.js';
import type { Cluster } from '../helpers/cluster.js';

const execFileP = promisify(execFile);

describe('the native Temporal server on PostgreSQL (deploy/native)', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(async () => {
    await cluster?.stop();
  });

  const describeNamespace = async () => {
    const conn = await Connection.connect({ address: cluster.address });
    try {
      return await conn.workflowService.describeNamespace({ namespace: cluster.namespace });
    } finally {
      await conn.close();
    }
  };

  it('serves the namespace with the retention of deploy/native/temporal.env (= docker-compose.yml)', async () => {
    const ns = await describeNamespace();
    const retentionS = Number(ns.config?.workflowExecutionRetentionTtl?.seconds ?? 0);
    assert.equal(`${retentionS / 3600}h`, nativeSettings()['DEFAULT_NAMESPACE_RETENTION']);
    const conn = await Connection.connect({ address: cluster.address });
    try {
      const info = await conn.workflowService.getSystemInfo({});
      assert.ok(info.serverVersion?.startsWith(nativeSettings()['TEMPORAL_SERVER_VERSION'] ?? '?'), info.serverVersion ?? '');
    } finally {
      await conn.close();
    }
  });

  it('runs the setup again without harm (a restarted unit): schema and namespace are kept', async () => {
    const before = (await describeNamespace()).namespaceInfo?.id;
    const log = path.join(cluster.dir, 'setup.log');
    await setupSchema(cluster.env, log);
    await registerNamespace(cluster.env, log);
    assert.equal((await describeNamespace()).namespaceInfo?.id, before, 'the same namespace, not a new one');
  });

  it('writes the server and database logs to files in the cluster dir only', () => {
    assert.match(readFileSync(cluster.processes[0]!.logFile, 'utf8'), /"msg":"Build info\."/);
    assert.match(readFileSync(cluster.pg.logFile, 'utf8'), /database system is ready to accept connections/);
  });

  it('PostgreSQL refuses a connection without the password and with a wrong one; the role is no superuser', async () => {
    const psql = path.join(postgresBinDir(), 'psql');
    const args = ['-h', '127.0.0.1', '-p', String(cluster.pg.port), '-U', 'temporal', '-d', 'temporal', '-w', '-c', 'select 1'];
    await assert.rejects(execFileP(psql, args, { env: { PATH: process.env['PATH'] } }), /password/);
    await assert.rejects(execFileP(psql, args, { env: { PATH: process.env['PATH'], PGPASSWORD: 'wrong' } }), /password authentication failed/);
    const pw = { PATH: process.env['PATH'], PGPASSWORD: readFileSync(cluster.pg.passwordFile, 'utf8').trim() };
    const ok = await execFileP(psql, [...args.slice(0, -1), "select rolsuper, rolcreatedb from pg_roles where rolname = current_user", '-tA'], { env: pw });
    assert.equal(ok.stdout.trim(), 'f|t', 'temporal: LOGIN CREATEDB, not a superuser (deploy/native/postgres-role.sh)');
  });

  it('a restarted server keeps its workflows (PostgreSQL holds them)', async () => {
    const conn = await Connection.connect({ address: cluster.address });
    const id = `native-restart-${Date.now()}`;
    try {
      await conn.workflowService.startWorkflowExecution({
        namespace: cluster.namespace, workflowId: id, requestId: id, identity: 'test',
        workflowType: { name: 'nobodyRunsThis' }, taskQueue: { name: 'native-test' },
      });
    } finally {
      await conn.close();
    }
    const server = cluster.processes[0]!;
    await server.stop();
    server.start();
    await cluster.ready();
    const again = await Connection.connect({ address: cluster.address });
    try {
      const d = await again.workflowService.describeWorkflowExecution({ namespace: cluster.namespace, execution: { workflowId: id } });
      assert.equal(d.workflowExecutionInfo?.execution?.workflowId, id);
    } finally {
      await again.close();
    }
  });
});
