/**
 * Upgrading pulse while deploys run (Worker Versioning, worker/versioning.ts), on the dev server with the real
 * activities on simulated nodes (test/helpers/builds.ts: builds A, B, C, D and how each check reads the server):
 * 1. a deploy started on A finishes on A after B comes up and takes the new deploys;
 * 2. the rolling procedure: C comes up, B stops only after its running deploy ended there;
 * 3. a deploy whose build lost its last worker waits (the newer build never takes it; watch says so), and
 *    finishes when that build's worker comes back — which serves it without taking new deploys back from the
 *    running current build; once the current build's last worker is gone, a starting older build does take over.
 * test/cluster/upgrade.test.ts runs case 1 on the production server (temporal-server, PostgreSQL, deploy/ config).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pinnedBuildNote, unservedPinnedBuild } from '../../cli/deploy-client/index.js';
import type { DeployResult } from '../../runtime/model/index.js';
import { startRig } from '../engine/rig.js';
import type { Rig } from '../engine/rig.js';
import { Builds, PINNED, upgradeDuringDeploy } from '../helpers/builds.js';
import { pollUntil } from '../helpers/until.js';
import { quietRuntime } from '../workflows/harness.js';

describe('upgrading pulse while deploys run', () => {
  let rig: Rig;
  let b: Builds;

  before(async () => {
    quietRuntime();
    rig = await startRig(['spark1', 'spark2']);
    b = new Builds(rig);
  });
  after(async () => {
    await b?.close();
    await rig?.close();
  });

  it('a deploy started on build A finishes on A after B comes up and takes the new deploys', async () => {
    await upgradeDuringDeploy(b);
  });

  it('rolling upgrade: C comes up, B stops only after its running deploy ended there', async () => {
    const [old] = b.workers;
    assert.ok(old && b.workers.length === 1);
    // spark1's server holds its listen until C is current: the deploy on B still runs when C comes up.
    rig.sim.node('spark1').setControl({ holdReady: true });
    let running: Awaited<ReturnType<typeof rig.start>>;
    let c: Awaited<ReturnType<typeof b.start>>;
    try {
      running = await rig.start(rig.upPlan('spark1', 'datagen'));
      await b.waitForReadinessWait(running);
      c = await b.start('C');
      await b.becomesCurrent(c);
    } finally {
      rig.sim.node('spark1').setControl({ holdReady: false });
    }
    const r = (await running.result()) as DeployResult;
    assert.equal(r.ok, true, r.error ?? '');
    await b.assertAllOn(running, old);
    await old.stop();

    const next = await rig.start(rig.downPlan('spark2'));
    const rn = (await next.result()) as DeployResult;
    assert.equal(rn.ok, true, rn.error ?? '');
    await b.assertAllOn(next, c);
  });

  it('a deploy whose build has no worker waits for that build, and its returning worker does not take new deploys back', async () => {
    const [c] = b.workers;
    assert.ok(c && b.workers.length === 1);
    rig.sim.node('spark2').setReadyDelay(6000);
    const pinned = await rig.start(rig.upPlan('spark2', 'best'));
    await b.waitForReadinessWait(pinned);
    const d = await b.start('D');
    await b.becomesCurrent(d);
    await c.stop(); // the readiness wait is cancelled by the shutdown; its retry belongs to build C
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal((await pinned.describe()).status.name, 'RUNNING');
    assert.deepEqual((await b.tasks(pinned)).filter((t) => t.identity !== c.identity), [], 'build D never took a task of the deploy pinned to C');
    // What watch/up/down say meanwhile (cli/deploy-client/pinned-build.ts).
    const t = { client: rig.client, target: { namespace: 'default' } };
    const ref = { workflowId: pinned.workflowId, runId: pinned.firstExecutionRunId };
    assert.equal(await unservedPinnedBuild(t, ref), c.buildId);
    assert.match(pinnedBuildNote(c.buildId), new RegExp(`^deploy pinned to build ${c.buildId}; no worker of that build runs — start \`pulse worker\` from that release`));

    const back = await b.start('C');
    assert.equal(back.buildId, c.buildId);
    assert.equal(await pollUntil(() => unservedPinnedBuild(t, ref), (x) => x === null, 100, 100), null, 'the returning worker serves it');
    const r = (await pinned.result()) as DeployResult;
    assert.equal(r.ok, true, r.error ?? '');
    assert.deepEqual(await b.pinnedTo(pinned), { behavior: PINNED, buildId: c.buildId });
    assert.equal(await b.currentBuild(), d.buildId);
    assert.match(await b.saidSo(back, 'serves the deploys pinned to it'), new RegExp(`build ${c.buildId} serves the deploys pinned to it; new deploys go to the current build ${d.buildId}`));

    await d.stop();
    const rollback = await b.start('B');
    await b.becomesCurrent(rollback); // no live worker of D: new deploys would wait for nobody
  });
});
