/**
 * smoke and status through the CLI against simulated servers of each vLLM release (docs/SIMULATOR.md "Fidelity",
 * vLLM table): a reasoning model that spends max_tokens thinking passes and shows what it got; a 401 and the old
 * flat error shape are reported with their reason; a dead engine fails the smoke (HTTP 500); the KV cache line is one canonical line whether the release
 * logs it in one line or two, with or without ANSI-coloured process prefixes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { StatusReport } from '../../runtime/status/types.js';
import type { SmokeResult } from '../../runtime/status/smoke.js';
import type { NodeControl } from '../sim/control.js';
import { DEFAULT_CONTROL } from '../sim/control.js';
import { SECRET_KEY, runSimCli, settleRequests, startServer, startStatusSim, writePulseEnv } from './sim-helpers.js';
import type { StatusSim } from './sim-helpers.js';

let s: StatusSim;
const outputs: string[] = [];
const CANONICAL = /^GPU KV cache size: [\d,]+ tokens, Maximum concurrency for 524,288 tokens per request: \d+\.\d\dx$/;

/**
 * (Re)start spark2's server with `control`, and wait for start.sh's first answered poll (200, or 401 for a server
 * whose key start.sh does not have: then start.sh runs on in the background, polling in vain as the recipe does).
 */
async function restart(control: Partial<NodeControl>, status = 200): Promise<void> {
  const n = s.sim.node('spark2');
  n.exec(`docker rm -f ${n.containerName} >/dev/null 2>&1 || true`);
  n.setControl({ ...DEFAULT_CONTROL, readyDelayMs: 200, ...control });
  const before = n.requests().length;
  startServer(n, status !== 200);
  for (let i = 0; i < 400 && !n.requests().slice(before).some((r) => r.status === status); i++) await new Promise((r) => setTimeout(r, 25));
}

async function smoke(): Promise<{ code: number; json: SmokeResult; text: string }> {
  const j = await runSimCli(s, ['model', 'smoke', '--node', 'spark2', '--json']);
  const t = await runSimCli(s, ['model', 'smoke', '--node', 'spark2']);
  outputs.push(j.stdout, j.stderr, t.stdout, t.stderr);
  assert.equal(j.code, t.code);
  return { code: j.code, json: JSON.parse(j.stdout) as SmokeResult, text: t.stdout };
}

describe('smoke and status on each vLLM release of the simulator', () => {
  before(async () => {
    s = await startStatusSim(2);
    writePulseEnv(s.sim.node('spark2'));
    startServer(s.sim.node('spark2'));
    await settleRequests(s.sim.node('spark2'));
  });
  after(async () => {
    for (const o of outputs) assert.ok(!o.includes(SECRET_KEY), 'the API key never reaches any output');
    await s?.stop();
  });

  test('a reasoning model whose max_tokens ran out while thinking passes: content none, reasoning, finish length', async () => {
    await restart({ reasoningParser: 'qwen3' });
    const r = await smoke();
    assert.equal(r.code, 0, r.text);
    assert.equal(r.json.ok, true);
    assert.equal(r.json.reply, null);
    assert.match(r.json.reasoning ?? '', /^Okay, the user asks/);
    assert.equal(r.json.finishReason, 'length');
    assert.equal(r.json.tokens.completion, 32);
    assert.match(r.text, /^smoke spark2: PASS$/m);
    assert.match(r.text, /^ {2}reply +\(none\)$/m);
    assert.match(r.text, /^ {2}reasoning +Okay, the user asks/m);
    assert.match(r.text, /^ {2}finish +length \(max_tokens reached\)$/m);
  });

  test('0.11 with the deepseek_r1 parser: the reasoning is in reasoning_content, and smoke shows it', async () => {
    await restart({ vllmRelease: '0.11.0', reasoningParser: 'deepseek_r1' });
    const r = await smoke();
    assert.equal(r.code, 0, r.text);
    assert.match(r.json.reasoning ?? '', /^Okay/);
    assert.equal(r.json.reply, null);
  });

  test('a .env that names no model: smoke asks without "model", which vLLM accepts, and shows who answered', async () => {
    await restart({});
    const n = s.sim.node('spark2');
    n.exec(`sed -i -e '/^SERVED_MODEL_NAME=/d' -e '/^MODEL=/d' '${n.envPath}'`);
    const r = await smoke();
    writePulseEnv(n);
    assert.equal(r.code, 0, r.text);
    assert.equal(r.json.model, 'qwen38', 'the model of the answer');
    assert.equal(n.requests().at(-1)?.model, undefined, 'the request named no model');
  });

  test('a plain model: the reply and finish stop', async () => {
    await restart({});
    const r = await smoke();
    assert.equal(r.code, 0, r.text);
    assert.equal(r.json.reply, 'Yes, I am up and ready to help.');
    assert.equal(r.json.reasoning, null);
    assert.equal(r.json.finishReason, 'stop');
  });

  test('a server that wants another key (VLLM_API_KEY in its image): smoke fails with HTTP 401 and says why', async () => {
    const n = s.sim.node('spark2');
    // Without API_KEY in the .env start.sh passes no --api-key, so vLLM takes the image's VLLM_API_KEY.
    n.exec(`sed -i '/^API_KEY=/d' '${n.envPath}'`);
    await restart({ imageApiKey: 'sk-image-other' }, 401);
    const r = await smoke();
    assert.equal(r.code, 9, r.text);
    assert.equal(r.json.httpStatus, 401);
    assert.equal(r.json.error, 'HTTP 401 Unauthorized: the server wants a key that the node .env does not give (API_KEY)');
    const st = await runSimCli(s, ['model', 'status', '--node', 'spark2', '--json']);
    const health = (JSON.parse(st.stdout) as StatusReport).nodes[0]?.health;
    assert.equal(health?.httpStatus, 401);
    assert.match(health?.detail ?? '', /the server wants a key that the node \.env does not give/);
    n.exec(`printf 'API_KEY="sk-image-other"\\n' >>'${n.envPath}'`);
    const ok = await smoke(); // the key the image wants, now given by the node .env
    assert.equal(ok.code, 0, ok.text);
    writePulseEnv(n);
  });

  test('0.10.0 flat error shape: smoke shows the server message', async () => {
    await restart({ vllmRelease: '0.10.0', failure: 'wrong-model' });
    const r = await smoke();
    assert.equal(r.code, 9);
    assert.equal(r.json.error, 'HTTP 404: The model `qwen38` does not exist.');
  });

  test('a dead engine: smoke fails with HTTP 500 (the completion needs the engine), never a PASS', async () => {
    await restart({});
    const n = s.sim.node('spark2');
    n.setControl({ engineDead: true });
    try {
      const r = await smoke();
      assert.equal(r.code, 9, r.text);
      assert.equal(r.json.ok, false);
      assert.equal(r.json.httpStatus, 500);
      assert.doesNotMatch(r.text, /PASS/);
    } finally {
      n.setControl({ engineDead: false });
    }
  });

  for (const release of ['0.10.0', '0.11.0', '0.33.0'] as const) {
    test(`status shows one canonical KV cache line from a ${release} log`, async () => {
      await restart({ vllmRelease: release });
      const r = await runSimCli(s, ['model', 'status', '--node', 'spark2', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const kv = (JSON.parse(r.stdout) as StatusReport).nodes[0]?.kvCache;
      assert.equal(kv?.source, 'log');
      assert.match(kv?.line ?? '', CANONICAL);
      const table = await runSimCli(s, ['model', 'status', '--node', 'spark2']);
      assert.match(table.stdout.replace(/\n {13}/g, ' '), /^ {2}kv cache +GPU KV cache size: [\d,]+ tokens, Maximum concurrency for 524,288 tokens per request: [\d.]+x$/m);
    });
  }
});
