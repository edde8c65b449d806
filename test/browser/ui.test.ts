/**
 * The Temporal Web UI, checked in a real browser: a dev server with its UI, one `up` deploy, then headless
 * Chromium opens the link the CLI prints for it and must show the workflow, its summary and the activity of every
 * step by name; the workflow list filtered by the PulseNode search attribute must find it (and only it). A
 * screenshot of each page goes to test-output/browser/.
 *
 * Skips (with the reason) when /usr/bin/chromium is absent; CI installs it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { Page } from 'playwright-core';
import { TASK_QUEUE, UP_WORKFLOW } from '../../workflows/definitions.js';
import { startDevServer, type DevServer } from '../helpers/dev-server.js';
import { chromiumMissing, launchLocalBrowser, type LocalBrowser } from './chromium.js';
import { runDeploy, type UiDeploy } from './deploy.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const shots = path.join(root, 'test-output', 'browser');

/** The activity of each of the nine steps of `up` (RUNTIME.md "What up does"). */
const UP_STEP_ACTIVITIES = ['runPreflight', 'makeDirs', 'stopServer', 'waitForMemory', 'writeEnv', 'startServer', 'pollReadiness', 'verifyServer', 'publishState'];

/** Activity types the run scheduled, read from its history (what the page must show). */
async function scheduledActivities(server: DevServer, d: UiDeploy): Promise<string[]> {
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
  await page.getByText(ready, { exact: true }).first().waitFor({ state: 'visible', timeout: 30_000 });
  return page.innerText('body');
}

test('the Web UI shows a deploy with its summary and every step, and finds it by PulseNode', { timeout: 120_000 }, async (t) => {
  const missing = chromiumMissing();
  if (missing) {
    t.skip(`browser tier skipped: ${missing}`);
    return;
  }
  mkdirSync(shots, { recursive: true });
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'pulse-ui-'));
  let server: DevServer | null = null;
  let browser: LocalBrowser | null = null;
  try {
    server = await startDevServer({ ui: true });
    const d = await runDeploy(server, stateDir, 'spark2', 'best');
    assert.equal(d.result.ok, true, `the deploy failed: ${d.result.error}`);
    t.diagnostic(`deploy ${d.workflowId} run ${d.runId}: ${d.link}`);
    const activities = await scheduledActivities(server, d);
    // publishState also runs before the start (state "starting"), so compare the sets, not the first-seen order.
    assert.deepEqual([...activities].sort(), [...UP_STEP_ACTIVITIES].sort(), 'a full up schedules the activity of each of the nine steps');

    browser = await launchLocalBrowser();
    const page = await browser.context.newPage();

    // 1. The page of the run, opened from the CLI's link.
    assert.match(d.link, new RegExp(`^${server.uiUrl}/namespaces/default/workflows/${d.workflowId}/${d.runId}/history$`));
    await page.goto(d.link);
    const history = await textWhen(page, d.workflowId);
    assert.match(history, /COMPLETED/i, 'status');
    assert.ok(history.includes(UP_WORKFLOW), 'workflow type');
    assert.ok(history.includes(TASK_QUEUE), 'task queue');
    await page.getByText('publishState', { exact: true }).first().waitFor({ timeout: 30_000 });
    const events = await page.innerText('body');
    for (const name of activities) assert.ok(events.includes(name), `the event history shows activity ${name}`);
    for (const [i, step] of ['preflight', 'mkdir', 'stop', 'memory wait', 'write .env', 'start', 'readiness', 'verify', 'publish state'].entries()) {
      assert.ok(events.includes(`${i + 1}/9 ${step} on ${d.node}`), `the event history shows the summary of step ${i + 1}`);
    }
    await page.screenshot({ path: path.join(shots, 'workflow-history.png'), fullPage: true });

    // 2. Its summary, under User Metadata.
    await page.getByRole('tab', { name: 'User Metadata' }).click();
    const meta = await textWhen(page, d.summary);
    assert.ok(meta.includes('Summary'));
    await page.screenshot({ path: path.join(shots, 'workflow-summary.png') });

    // 3. The workflow list filtered by the node's search attribute finds this deploy, and another node's finds none.
    const list = (node: string) => `${server!.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(`PulseNode="${node}"`)}`;
    await page.goto(list(d.node));
    const found = await textWhen(page, d.runId);
    assert.ok(found.includes(d.workflowId) && found.includes(UP_WORKFLOW));
    await page.screenshot({ path: path.join(shots, 'workflows-by-node.png') });
    await page.goto(list('no-such-node'));
    await page.getByText(/No Workflows/i).first().waitFor({ timeout: 30_000 });
    assert.ok(!(await page.innerText('body')).includes(d.runId), 'a filter for another node must not list the deploy');

    t.diagnostic(`screenshots in ${path.relative(root, shots)}; requests kept off the network: ${browser.blocked.length}`);
  } finally {
    await browser?.close();
    await server?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
});
