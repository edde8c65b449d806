/**
 * The drain's cut count across a retried stop. stop.sh reads what is in flight right before the signal (atSignal),
 * but only when the container still runs: a stop whose first attempt signalled the server (cutting a request) and
 * then failed (here: docker could not remove the container, `dead`, a temporary failure that Temporal retries) is
 * retried on a server that is already gone, reads nothing (atSignal null), and the deploy falls back on the drain's
 * own count (0: the drain was skipped or saw it idle). The request the first attempt cut is then reported nowhere:
 * no warning, no `!`, cut 0. Real CLI, embedded Temporal server and worker, simulated sshd node with its Docker engine.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Sim, SimNode } from '../sim/index.js';
import { clearInflight, inflightRecords } from '../sim/vllm-metrics.js';
import { runCli, startCli, waitForOutput } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { streamChat } from '../helpers/stream-client.js';
import { until } from '../helpers/until.js';

const NODE = 'simA';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

before(async () => ({ sim, dir, env } = await startSimCli('pulse-stop-retry-cut-', { nodes: [NODE], readyDelayMs: 300 })));
after(() => stopSimCli(sim, dir));

/** `up best` on the node, then one chat request held in flight (the server generates until released). */
async function upWithOneInFlight(): Promise<{ node: SimNode; client: ReturnType<typeof streamChat> }> {
  const node = sim!.node(NODE);
  const first = await runCli(['model', 'up', 'best', '--node', NODE], env);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  node.setControl({ generationMs: 200, holdGeneration: true });
  clearInflight(node.paths.state);
  const client = streamChat(node.vllmPort);
  await until('1 request in flight', () => inflightRecords(node.paths.state).filter((r) => r.event === 'begin').length >= 1, 30_000);
  return { node, client };
}

test('control: the same stop, not retried, reports the request it cut', async () => {
  const { node, client } = await upWithOneInFlight();
  let r;
  try {
    r = await runCli(['model', 'down', '--node', NODE, '--drain-s', '0'], env);
  } finally {
    node.setControl({ holdGeneration: false });
  }
  const out = r.stdout + r.stderr;
  assert.equal(r.code, 0, out);
  assert.equal((await client).complete, false, 'the request in flight was cut by the stop');
  assert.match(out, /cut (it|1 request)/, `the request the stop cut is reported:\n${out}`);
});

// A known gap (docs/DEPLOYS.md, drain limits): the count is read by the attempt that sends the signal and travels in
// its result; an attempt that then fails loses it, and the next finds the container gone. Kept as a todo that runs.
test('a stop retried after its first attempt cut a request still reports the request cut (not cut 0 with a green tick)', {
  todo: 'the first attempt\'s count at the signal is lost when that attempt fails after sending it',
}, async () => {
  const { node, client } = await upWithOneInFlight();

  // The first attempt's removal fails (the container stays dead); cleared once the step is retried.
  const release = node.failRemoval();
  const run = startCli(['model', 'down', '--node', NODE, '--drain-s', '0'], env);
  try {
    await waitForOutput(run, /attempt 2/, 120_000);
  } finally {
    release();
    node.setControl({ holdGeneration: false });
  }
  const r = await run.done;
  const out = r.stdout + r.stderr;
  assert.equal(r.code, 0, out);
  assert.equal((await client).complete, false, 'the request in flight was cut by the stop');
  assert.match(out, /cut (it|1 request)/, `the request the stop cut is reported:\n${out}`);
});
