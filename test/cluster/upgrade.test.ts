/**
 * The upgrade of test/e2e/upgrade.test.ts case 1 on the production server: the built temporal-server on PostgreSQL,
 * started by deploy/native's scripts with deploy/compose/dynamicconfig/pulse.yaml (test/helpers/cluster.ts). A
 * deploy started on build A finishes on A after B comes up and takes the new deploys.
 */
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import { ensureSearchAttributes } from '../../cli/deploy-client/temporal.js';
import { startRig } from '../engine/rig.js';
import type { Rig } from '../engine/rig.js';
import { Builds, upgradeDuringDeploy } from '../helpers/builds.js';
import { startCluster } from '../helpers/cluster.js';
import { quietRuntime } from '../workflows/harness.js';

describe('upgrading pulse while a deploy runs, on the production server', () => {
  let rig: Rig;
  let b: Builds;

  before(async () => {
    quietRuntime();
    rig = await startRig(['spark1', 'spark2'], {}, async () => {
      const cluster = await startCluster();
      // The CLI registers pulse's search attributes at connect; a fresh cluster has none (the dev server gets them as flags).
      const connection = await Connection.connect({ address: cluster.address });
      await ensureSearchAttributes(connection, 'default').finally(() => connection.close());
      return cluster;
    });
    b = new Builds(rig);
  });
  after(async () => {
    await b?.close();
    await rig?.close();
  });

  it('a deploy started on build A finishes on A after B comes up and takes the new deploys', async () => {
    await upgradeDuringDeploy(b);
  });
});
