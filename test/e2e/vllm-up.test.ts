/**
 * up through the CLI (embedded dev server, in-process worker) against simulated servers of two vLLM releases:
 * verify saves one canonical KV cache line whether the log has it in one line or two behind ANSI-coloured process
 * prefixes; a server that wants a key the node .env does not give fails readiness at once as Unauthorized, not
 * after the readiness timeout as "not ready".
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { stopEmbeddedServer } from '../../cli/embedded-server.js';
import { startSim, type Sim } from '../sim/index.js';
import { killEmbeddedServerOnExit, removeDir, runCli, simCliEnv, tempDir } from '../helpers/cli.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
const stateDir = () => path.join(dir, 'state');
const CANONICAL = /^GPU KV cache size: [\d,]+ tokens, Maximum concurrency for 524,288 tokens per request: \d+\.\d\dx$/;

async function kvCacheLine(node: string): Promise<string | null> {
  return (JSON.parse(await readFile(path.join(stateDir(), 'nodes', `${node}.json`), 'utf8')) as { kvCacheLine: string | null }).kvCacheLine;
}

before(async () => {
  dir = await tempDir('pulse-vllm-up-');
  killEmbeddedServerOnExit(stateDir());
  sim = await startSim({ nodes: ['simA', 'simB'], readyDelayMs: 300 });
  env = await simCliEnv(sim, dir);
});

after(async () => {
  await stopEmbeddedServer(stateDir());
  await sim?.stop();
  await removeDir(dir);
});

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
  assert.match(r.stdout, /up best on simB: FAILED, node failed/);
  assert.doesNotMatch(r.stdout + r.stderr, /sk-image-only/);
});
