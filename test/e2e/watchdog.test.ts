/**
 * The scheduled health watch (issue 16) through the product: `pulse model watchdog on|off|list` against the real
 * dev server, a real `pulse worker` process and simulated nodes over sshd. A killed vLLM turns the verdict and
 * disables the endpoint within a few intervals (with its history row and status line); --heal brings last known
 * good back with one start.sh per heal; a crash loop stops after K heals with the reason in the state and status;
 * a protected node without --yes gets no HTTP request; a worker restart loses no schedule; `off` removes it.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { NodeState, WatchdogRecord } from '../../runtime/model/index.js';
import { runCli } from '../helpers/cli.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { until } from '../helpers/until.js';

let stack: Stack;
const LONG = 180_000;
/** The endpoint's reason once the watchdog disabled it (or the fallback kept it enabled despite that). */
const DISABLED = /^(kept enabled by the fallback: )?watchdog: \d+ failed checks in a row/;

async function state(node: string): Promise<NodeState | null> {
  try {
    return JSON.parse(await readFile(path.join(stack.stateDir, 'nodes', `${node}.json`), 'utf8')) as NodeState;
  } catch {
    return null;
  }
}
const record = async (node: string): Promise<WatchdogRecord | null> => (await state(node))?.watchdog ?? null;

async function endpoint(node: string): Promise<{ enabled: boolean; reason?: string } | undefined> {
  try {
    const f = JSON.parse(await readFile(path.join(stack.stateDir, 'gateway-backends.json'), 'utf8')) as { models: { endpoints: { name: string; enabled: boolean; reason?: string }[] }[] };
    return f.models[0]?.endpoints.find((e) => e.name === node);
  } catch {
    return undefined;
  }
}

async function cli(...args: string[]): Promise<string> {
  const r = await runCli(args, stack.env);
  assert.equal(r.code, 0, `pulse ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

/** Waits for `ok` with a generous deadline, and says what the record and the endpoint were on a timeout. */
async function waitFor(what: string, node: string, ok: () => Promise<boolean>): Promise<void> {
  await until(what, ok, LONG, { everyMs: 300 }).catch(async (e: unknown) => {
    throw new Error(`${String(e)}\nrecord: ${JSON.stringify(await record(node))}\nendpoint: ${JSON.stringify(await endpoint(node))}\nworker: ${stack.workers.at(-1)?.log().slice(-3000) ?? ''}`);
  });
}

function kill(node: string): void {
  const n = stack.sim.node(node);
  n.docker('kill', n.containerName);
}

before(async () => {
  stack = await startStack({ nodes: ['simA', 'simB'], protected: ['simB'], readyDelayMs: 200 });
  await cli('model', 'up', 'datagen', '--node', 'simA');
  await cli('model', 'up', 'datagen', '--node', 'simB', '--yes');
});
after(async () => {
  await stack?.stop();
});

test('bad input: an interval under the minimum, an unknown node, --heal on a protected node without --yes', async () => {
  const short = await runCli(['model', 'watchdog', 'on', '--node', 'simA', '--every', '1s'], stack.env);
  assert.notEqual(short.code, 0);
  assert.match(short.stderr, /--every must be a time like 90, 45s, 10m or 1h30m, whole seconds from 2s to 24h, got "1s"/);
  const unknown = await runCli(['model', 'watchdog', 'on', '--node', 'nope'], stack.env);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /nope/);
  const prot = await runCli(['model', 'watchdog', 'on', '--node', 'simB', '--heal'], stack.env);
  assert.notEqual(prot.code, 0);
  assert.match(prot.stderr, /simB is protected; add --yes to let the watchdog heal it/);
});

test('a killed vLLM: the verdict turns, the endpoint is disabled with the reason, status and history say so; no heal without --heal', async () => {
  const n = stack.sim.node('simA');
  await cli('model', 'watchdog', 'on', '--node', 'simA', '--every', '2s', '--after', '2');
  await waitFor('a first ok check', 'simA', async () => (await record('simA'))?.judged === 'ok');
  const starts = n.startShCalls().length;
  kill('simA');
  // The sim's other node is unreachable from the gateway, so the file's fallback keeps this one enabled by name;
  // the reason is the watchdog's either way (the plain disable: test/unit/watchdog.test.ts).
  await waitFor('the endpoint disabled by the watchdog', 'simA', async () => DISABLED.test((await endpoint('simA'))?.reason ?? ''));
  assert.match((await endpoint('simA'))?.reason ?? '', /watchdog: 2 failed checks in a row since /, 'disabled at the second failed check in a row (--after 2)');
  const rec = await record('simA');
  assert.equal(rec?.judged, 'down');
  assert.match(rec?.reason ?? '', /container vllm-qwen38 is exited/);
  assert.equal(n.startShCalls().length, starts, 'no heal without --heal');
  const status = await runCli(['model', 'status', '--node', 'simA'], stack.env);
  assert.match(status.stdout, /watchdog\s+down\s+since\s+\d\d:\d\d,\s+\d+\s+checks:\s+container\s+vllm-qwen38\s+is\s+exited.*endpoint\s+disabled/s, status.stdout);
  const json = JSON.parse((await runCli(['model', 'status', '--node', 'simA', '--json'], stack.env)).stdout) as { nodes: { watchdog: WatchdogRecord | null }[] };
  assert.equal(json.nodes[0]?.watchdog?.judged, 'down');
  const history = await cli('model', 'history', '--node', 'simA', '--json');
  const rows = JSON.parse(history) as { action: string; outcome: string | null; result: string }[];
  assert.ok(rows.some((r) => r.action === 'watchdog' && r.outcome === 'watchdog-down' && /ok → down/.test(r.result)), history);
  assert.ok(rows.some((r) => r.action === 'watchdog' && r.outcome === 'watchdog-ok'), 'the first verdict is a row too');
  assert.ok(rows.filter((r) => r.action === 'watchdog').length <= 3, 'only the runs that changed the verdict are rows');
  const list = await cli('model', 'watchdog', 'list');
  assert.match(list, /^NODE +EVERY +AFTER +HEAL +NEXT \(UTC\) +LAST VERDICT$/m, list);
  assert.match(list, /^simA +2s +2 +no +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +down since/m, list);
});

test('--heal: last known good comes back, the endpoint is enabled again, one start.sh per heal', async () => {
  const n = stack.sim.node('simA');
  const starts = n.startShCalls().length;
  const healsBefore = (await record('simA'))?.healsTotal ?? 0;
  await cli('model', 'watchdog', 'on', '--node', 'simA', '--every', '2s', '--after', '2', '--heal');
  await waitFor('healed: serving and enabled', 'simA', async () => {
    const r = await record('simA');
    return r?.judged === 'ok' && (await endpoint('simA'))?.reason === undefined && (await endpoint('simA'))?.enabled === true && (await state('simA'))?.state === 'up';
  });
  const heals = ((await record('simA'))?.healsTotal ?? 0) - healsBefore;
  assert.ok(heals >= 1, 'a heal ran');
  assert.equal(n.startShCalls().length - starts, heals, 'one start.sh per heal');
  assert.ok(n.containers().some((c) => c.State.Running), 'the container runs again');
});

test('a crash loop: healing stops after K heals, the node is marked failed with the reason, status says so', async () => {
  const n = stack.sim.node('simA');
  await cli('model', 'watchdog', 'on', '--node', 'simA', '--every', '2s', '--after', '2', '--heal', '--heals-per-hour', '3');
  const before = (await record('simA'))?.heals.length ?? 0;
  const starts = n.startShCalls().length;
  n.setFailure('crash-at-start');
  kill('simA');
  await waitFor('healing stopped', 'simA', async () => Boolean((await record('simA'))?.gaveUp));
  const rec = await record('simA');
  assert.match(rec?.gaveUp ?? '', /^heal budget spent: 3 heal\(s\) in the last hour \(at most 3\), still down: /);
  assert.equal(n.startShCalls().length - starts, 3 - before, 'one start.sh per heal, none after the budget');
  const s = await state('simA');
  assert.equal(s?.state, 'failed');
  assert.match(s?.error ?? '', /^watchdog: heal budget spent/);
  assert.match((await endpoint('simA'))?.reason ?? '', /^(kept enabled by the fallback: )?state failed at .*: watchdog: heal budget spent/);
  const status = await runCli(['model', 'status', '--node', 'simA'], stack.env);
  assert.match(status.stdout, /HEALING\s+STOPPED:\s+heal\s+budget\s+spent/, status.stdout);
  await cli('model', 'watchdog', 'off', '--node', 'simA');
  n.setFailure('none');
});

test('a protected node without --yes: container checks only, no HTTP request; a worker restart loses no schedule; off removes it', async () => {
  const n = stack.sim.node('simB');
  const requests = n.requests().length;
  await cli('model', 'watchdog', 'on', '--node', 'simB', '--every', '2s');
  await waitFor('three ok checks', 'simB', async () => ((await record('simB'))?.streak ?? 0) >= 3 && (await record('simB'))?.judged === 'ok');
  assert.match((await record('simB'))?.notes.join(' ') ?? '', /container only: not checked: protected node/);
  assert.equal(n.requests().length, requests, 'no HTTP request reached the protected node');

  const worker = stack.workers.at(-1);
  await worker?.kill();
  const restartedAt = new Date().toISOString();
  await stack.startWorker();
  await waitFor('a check after the worker restart', 'simB', async () => ((await record('simB'))?.at ?? '') > restartedAt);
  assert.match(await cli('model', 'watchdog', 'list'), /^simB +2s +3 +no /m);

  const off = await cli('model', 'watchdog', 'off', '--node', 'simB');
  assert.match(off, /watchdog off for simB: schedule pulse-watchdog-simB removed/);
  assert.doesNotMatch(await cli('model', 'watchdog', 'list'), /simB/);
  await waitFor('the record cleared', 'simB', async () => (await record('simB')) === null);
  assert.equal(n.requests().length, requests, 'still no HTTP request');
});
