/**
 * up through the CLI (embedded dev server, in-process worker) against simulated servers of two vLLM releases:
 * verify saves one canonical KV cache line whether the log has it in one line or two behind ANSI-coloured process
 * prefixes; a server that wants a key the node .env does not give fails readiness at once as Unauthorized, not
 * after the readiness timeout as "not ready"; MAX_MODEL_LEN=512K is the 524288 that vLLM reports, and verify
 * checks it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Sim } from '../sim/index.js';
import { runCli } from '../helpers/cli.js';
import { savedNodeState, startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { REPO_ROOT } from '../helpers/paths.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
const CANONICAL = /^GPU KV cache size: [\d,]+ tokens, Maximum concurrency for 524,288 tokens per request: \d+\.\d\dx$/;

const kvCacheLine = async (node: string): Promise<string | null> => (await savedNodeState(dir, node)).kvCacheLine;

before(async () => ({ sim, dir, env } = await startSimCli('pulse-vllm-up-', { nodes: ['simA', 'simB'], readyDelayMs: 300 })));

after(() => stopSimCli(sim, dir));

for (const release of ['0.11.0', '0.33.0'] as const) {
  test(`up on a vLLM ${release} server saves and shows one canonical KV cache line`, async () => {
    sim!.node('simA').setControl({ vllmRelease: release });
    const r = await runCli(['model', 'up', 'best', '--node', 'simA', '--restart'], env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match((await kvCacheLine('simA')) ?? '', CANONICAL);
    assert.match(r.stdout, /8\/9 verify on simA .*GPU KV cache size: [\d,]+ tokens, Maximum concurrency for 524,288 tokens per request/);
  });
}

test('a server that wants a key the node .env does not give fails readiness as Unauthorized, without waiting', async () => {
  sim!.node('simB').setControl({ imageApiKey: 'sk-image-only' });
  const r = await runCli(['model', 'up', 'best', '--node', 'simB', '--timeout-s', '20'], env);
  assert.equal(r.code, 11, r.stdout + r.stderr);
  assert.match(r.stdout, /✗ 7\/9 readiness on simB/);
  assert.match(r.stdout + r.stderr, /401 Unauthorized \(.*\.env sets no API_KEY; vLLM reads --api-key, else VLLM_API_KEY in the container\)/);
  assert.match(r.stdout, /up best on simB: FAILED at readiness \(cause above\), node failed/);
  assert.doesNotMatch(r.stdout + r.stderr, /sk-image-only/);
});

test('MAX_MODEL_LEN=512K: vLLM reads 524288, and verify expects it (a server with another length fails verify)', async () => {
  const profiles = path.join(dir, 'profiles');
  await cp(path.join(REPO_ROOT, 'runtime/qwen38/profiles'), profiles, { recursive: true });
  const best = await readFile(path.join(profiles, 'best.env'), 'utf8');
  await writeFile(path.join(profiles, 'best.env'), best.replace('MAX_MODEL_LEN=524288', 'MAX_MODEL_LEN=512K'));
  const e = { ...env, PULSE_PROFILES_DIR: profiles };
  sim!.node('simA').setControl({ vllmRelease: '0.33.0', imageApiKey: null });
  const ok = await runCli(['model', 'up', 'best', '--node', 'simA', '--restart'], e);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  sim!.node('simA').setFailure('wrong-max-len');
  const bad = await runCli(['model', 'up', 'best', '--node', 'simA', '--restart'], e);
  sim!.node('simA').setFailure('none');
  assert.notEqual(bad.code, 0, bad.stdout);
  assert.match(bad.stdout + bad.stderr, /max_model_len is 262144, expected 524288/);
});
