/**
 * The Temporal Web UI, checked in a real browser: a dev server with its UI, two simulated nodes, a `pulse worker`,
 * then `pulse model up best --node spark2` and `pulse model down --node spark1 --yes` through the CLI. Headless
 * Chromium opens the link the CLI printed for the up and must show the workflow, its summary and the activity of
 * every step by name; the workflow list filtered by the PulseNode search attribute must find each deploy and only
 * it. A screenshot of each page goes to test-output/browser/. The same checks run twice: on the dev server's own
 * UI, and on the production UI (the built temporalio/ui server, deploy/native/temporal-ui.sh) in front of the
 * PostgreSQL cluster (test/helpers/cluster.ts); its screenshots go to test-output/browser/cluster/.
 *
 * Skips (with the reason) when /usr/bin/chromium is absent; CI installs it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Page } from 'playwright-core';
import { TASK_QUEUE, UP_WORKFLOW } from '../../workflows/definitions.js';
import { startCluster, startTemporalUi } from '../helpers/cluster.js';
import { startDevServer, type DevServer } from '../helpers/dev-server.js';
import { startSim, type Sim } from '../sim/index.js';
import { chromiumMissing, launchLocalBrowser, type LocalBrowser } from './chromium.js';
import { cliEnv, runCliDeploy, startWorker, type CliDeploy, type WorkerProcess } from './deploy.js';
import { REPO_ROOT } from '../helpers/paths.js';

const shotsDir = path.join(REPO_ROOT, 'test-output', 'browser');

/** The activity of each of the nine steps of `up` (RUNTIME.md "What up does"). */
const UP_STEP_ACTIVITIES = ['runPreflight', 'makeDirs', 'stopServer', 'waitForMemory', 'writeEnv', 'startServer', 'pollReadiness', 'verifyServer', 'publishState'];

/** A Temporal server with a Web UI: what the checks need of it. */
type UiServer = Pick<DevServer, 'address' | 'namespace' | 'uiUrl' | 'stop'>;

/** Activity types the run scheduled, read from its history (what the page must show). */
async function scheduledActivities(server: UiServer, d: CliDeploy): Promise<string[]> {
  const connection = await Connection.connect({ address: server.address });
  try {
    const client = new Client({ connection, namespace: server.namespace });
    const history = await client.workflow.getHandle(d.workflowId, d.runId).fetchHistory();
    const names = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n): n is string => Boolean(n));
    return [...new Set(names)];
  } finally {
    await connection.close();
  }
}

/** The page's visible text once `ready` is on it (the UI renders after its API calls). */
async function textWhen(page: Page, ready: string): Promise<string> {
  // Only visible matches: the UI keeps hidden copies of some texts (tooltips, collapsed cells) in the DOM.
  await page.getByText(ready, { exact: true }).filter({ visible: true }).first().waitFor({ state: 'visible', timeout: 30_000 });
  return page.innerText('body');
}

/** Waits until some frame's text contains `needle` (markdown frames load after the page); false after 30 s. */
async function frameShows(page: Page, needle: string): Promise<boolean> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const texts = await Promise.all(page.frames().map((f) => f.evaluate('document.body ? document.body.innerText : ""').catch(() => '')));
    if (texts.some((x) => String(x).includes(needle))) return true;
    if (Date.now() > deadline) return false;
    await page.waitForTimeout(250);
  }
}

/** The dev server with its UI. */
const devServer = (): Promise<UiServer> => startDevServer({ ui: true });

/** The PostgreSQL cluster with the production UI in front of it; stop() ends both. */
async function clusterServer(): Promise<UiServer> {
  const cluster = await startCluster();
  try {
    const ui = await startTemporalUi(cluster);
    return { address: cluster.address, namespace: cluster.namespace, uiUrl: ui.url, stop: async () => { await ui.stop(); await cluster.stop(); } };
  } catch (e) {
    await cluster.stop();
    throw e;
  }
}

for (const [name, startServer, shots] of [['the dev server\'s UI', devServer, shotsDir], ['the production UI on the PostgreSQL cluster', clusterServer, path.join(shotsDir, 'cluster')]] as const) {
test(`${name} shows a CLI deploy on the simulator with its summary and every step, and finds it by PulseNode`, { timeout: 180_000 }, async (t) => {
  const missing = chromiumMissing();
  if (missing) {
    t.skip(`browser tier skipped: ${missing}`);
    return;
  }
  mkdirSync(shots, { recursive: true });
  rmSync(path.join(shots, 'failure.png'), { force: true }); // only this run's failure may leave one
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'pulse-ui-'));
  let server: UiServer | null = null;
  let sim: Sim | null = null;
  let worker: WorkerProcess | null = null;
  let browser: LocalBrowser | null = null;
  let page: Page | null = null;
  try {
    // Both start at once; whichever started is kept for the finally block even when the other failed.
    const [srv, nodes] = await Promise.allSettled([startServer(), startSim({ nodes: 2 })]);
    if (srv.status === 'fulfilled') server = srv.value;
    if (nodes.status === 'fulfilled') sim = nodes.value;
    if (!server || !sim) throw srv.status === 'rejected' ? srv.reason : (nodes as PromiseRejectedResult).reason;
    const env = cliEnv(server, sim, stateDir);
    worker = await startWorker(env);
    const node = 'spark2';
    const summary = `up best on ${node}`; // the static summary cli/commands/up.ts gives the workflow
    const d = await runCliDeploy(['up', 'best', '--node', node], env);
    assert.match(d.result.stdout, new RegExp(`${summary}: ok`), 'the deploy succeeded');
    assert.equal(d.workflowId, `pulse-model-${node}`);
    const other = await runCliDeploy(['down', '--node', 'spark1', '--yes'], env);
    t.diagnostic(`deploy ${d.workflowId} run ${d.runId}: ${d.link}`);
    const activities = await scheduledActivities(server, d);
    // publishState also runs before the start (state "starting"), so compare the sets, not the first-seen order.
    // checkPlan: the worker's check of the plan before step 1 (workflows/up.ts, the worker is the authority).
    // acquireNodeLock/releaseNodeLock: the node's own deploy lock around the steps (runtime/scripts/lock.sh).
    const around = ['checkPlan', 'acquireNodeLock', 'releaseNodeLock'];
    assert.deepEqual([...activities].sort(), [...UP_STEP_ACTIVITIES, ...around].sort(), 'a full up schedules the activity of each of the nine steps');

    browser = await launchLocalBrowser();
    page = await browser.context.newPage();

    // 1. The page of the run, opened from the CLI's link.
    assert.equal(d.link, `${server.uiUrl}/namespaces/default/workflows/${d.workflowId}/${d.runId}/history`);
    await page.goto(d.link);
    const history = await textWhen(page, d.workflowId);
    assert.match(history, /COMPLETED/i, 'status');
    assert.ok(history.includes(UP_WORKFLOW), 'workflow type');
    assert.ok(history.includes(TASK_QUEUE), 'task queue');
    await textWhen(page, 'publishState');
    const events = await page.innerText('body');
    for (const name of activities) assert.ok(events.includes(name), `the event history shows activity ${name}`);
    for (const [i, step] of ['preflight', 'mkdir', 'stop', 'memory wait', 'write .env', 'start', 'readiness', 'verify', 'publish state'].entries()) {
      assert.ok(events.includes(`${i + 1}/9 ${step} on ${node}`), `the event history shows the summary of step ${i + 1}`);
    }
    await page.screenshot({ path: path.join(shots, 'workflow-history.png'), fullPage: true });

    // 2. Its summary, under User Metadata. The UI renders user metadata as markdown in sandboxed iframes: the
    // static summary in #user-metadata-summary, and the workflow's current details (asked from the live worker).
    await page.getByRole('tab', { name: 'User Metadata' }).click();
    await page.frameLocator('iframe#user-metadata-summary').getByText(summary, { exact: true }).waitFor({ timeout: 30_000 });
    assert.ok(await frameShows(page, `${summary} (full)`), 'current details (from the live worker): the finished deploy and its mode');
    await page.screenshot({ path: path.join(shots, 'workflow-summary.png') });

    // 3. The compact history (one row per activity, what an operator reads) lists every step as well.
    await page.goto(d.link);
    await textWhen(page, d.workflowId);
    await page.getByRole('button', { name: 'Compact' }).click();
    await textWhen(page, 'runPreflight');
    const compact = await page.innerText('body');
    for (const name of activities) assert.ok(compact.includes(name), `the compact view shows activity ${name}`);
    await page.screenshot({ path: path.join(shots, 'workflow-compact.png') });

    // 4. The workflow list filtered by each node's search attribute finds that node's deploy and not the other's.
    const list = (n: string) => `${server!.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(`PulseNode="${n}"`)}`;
    await page.goto(list(node));
    const found = await textWhen(page, d.runId);
    assert.ok(found.includes(d.workflowId) && found.includes(UP_WORKFLOW));
    assert.ok(!found.includes(other.runId), `the filter for ${node} must not list the deploy on spark1`);
    await page.screenshot({ path: path.join(shots, 'workflows-by-node.png') });
    await page.goto(list('spark1'));
    const found1 = await textWhen(page, other.runId);
    assert.ok(!found1.includes(d.runId), `the filter for spark1 must not list the deploy on ${node}`);

    t.diagnostic(`screenshots in ${path.relative(REPO_ROOT, shots)}; requests kept off the network: ${browser.blocked.length}`);
  } catch (e) {
    // What the browser saw when it failed, for the CI log reader.
    await page?.screenshot({ path: path.join(shots, 'failure.png'), fullPage: true }).catch(() => undefined);
    throw e;
  } finally {
    // Every process this test started, even after a failure: browser, worker, then the server and the nodes.
    await browser?.close();
    await worker?.stop();
    await Promise.all([server?.stop(), sim?.stop()]);
    rmSync(stateDir, { recursive: true, force: true });
  }
});
}
