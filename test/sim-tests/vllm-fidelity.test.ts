/**
 * The simulated vLLM against what vLLM's source does (docs/SIMULATOR.md "Fidelity", vLLM table): the release
 * switch (log prefixes, the KV cache in one line or two, error shapes, the reasoning field), the API key from
 * --api-key or VLLM_API_KEY on /v1 only, a chat request without `model`, the usage block, /v1/models and /health.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSim, stopAllSims, CONTAINER_NAME, PROFILE_IMAGE } from '../sim/index.js';
import type { Sim } from '../sim/index.js';
import type { NodeControl } from '../sim/control.js';
import { DEFAULT_CONTROL } from '../sim/control.js';
import { sshScript } from './helpers.js';

let sim: Sim;

interface Served {
  out: string;
  logs: string;
  json: (tag: string) => Record<string, unknown>;
}

/**
 * Starts one server on spark1 with `control`, waits until it answers /health, runs `script` (curl lines whose
 * output starts with `TAG ` so each can be found), then prints its docker logs and removes it.
 */
async function serve(control: Partial<NodeControl>, args: string, script: (port: number) => string, dockerEnv = ''): Promise<Served> {
  const n = sim.node('spark1');
  n.setControl({ ...DEFAULT_CONTROL, readyDelayMs: 100, ...control });
  const port = n.vllmPort;
  const r = await sshScript(sim, 'spark1', `docker run -d --name ${CONTAINER_NAME} --gpus all --network host ${dockerEnv} ${PROFILE_IMAGE} vllm serve Qwen/Qwen3.8-Flash-Next --max-model-len 65536 --port ${port} --host 127.0.0.1 ${args} >/dev/null
for i in $(seq 200); do curl -s -o /dev/null localhost:${port}/health && break; sleep 0.05; done
${script(port)}
echo '@@logs'; docker logs ${CONTAINER_NAME} 2>&1; docker rm -f ${CONTAINER_NAME} >/dev/null`);
  assert.equal(r.code, 0, r.stderr);
  const [out = '', logs = ''] = r.stdout.split('@@logs\n');
  const json = (tag: string) => {
    const line = out.split('\n').find((l) => l.startsWith(`${tag} `));
    assert.ok(line, `${tag} in ${out}`);
    return JSON.parse(line.slice(tag.length + 1)) as Record<string, unknown>;
  };
  return { out, logs, json };
}

const chat = (port: number, tag: string, body: string, auth = '') =>
  `printf '${tag} '; curl -s ${auth} -H 'content-type: application/json' -d '${body}' localhost:${port}/v1/chat/completions; echo`;
const code = (port: number, tag: string, p: string, auth = '') => `echo "${tag}=$(curl -s -o /dev/null -w '%{http_code}' ${auth} localhost:${port}${p})"`;

describe('the simulated vLLM follows the vLLM source', () => {
  before(async () => {
    sim = await startSim({ nodes: 1, readyDelayMs: 100 });
  });
  after(() => stopAllSims());

  test('current release: one KV cache line, "(Process pid=N)" on logger lines only, nested errors', async () => {
    const s = await serve({ vllmRelease: '0.33.0' }, '--served-model-name qwen38', (p) => chat(p, 'NF', '{"model":"nope","messages":[]}'));
    assert.match(s.logs, /^\(EngineCore pid=\d+\) INFO \d\d-\d\d [\d:]+ \[kv_cache_utils\.py:\d+\] GPU KV cache size: [\d,]+ tokens, Maximum concurrency for 65,536 tokens per request: \d+\.\d\dx$/m);
    assert.doesNotMatch(s.logs, /^.*Maximum concurrency.*$\n^.*Maximum concurrency/m);
    assert.match(s.logs, /^\(APIServer pid=\d+\) INFO .*vLLM API server version 0\.33\.0$/m);
    assert.match(s.logs, /^INFO: {5}Application startup complete\.$/m, 'uvicorn writes its own lines, without the prefix');
    assert.doesNotMatch(s.logs, /\x1b/, 'no colour without a tty');
    assert.deepEqual(s.json('NF'), { error: { message: 'The model `nope` does not exist.', type: 'NotFoundError', param: null, code: 404 } });
  });

  test('0.11: two KV cache lines; every line of both processes carries the ANSI-coloured prefix', async () => {
    const s = await serve({ vllmRelease: '0.11.0' }, '--served-model-name qwen38', (p) => chat(p, 'NF', '{"model":"nope","messages":[]}'));
    assert.match(s.logs, /^\x1b\[1;36m\(EngineCore_DP0 pid=\d+\)\x1b\[0;0m INFO .*\[kv_cache_utils\.py:1087\] GPU KV cache size: [\d,]+ tokens$/m);
    assert.match(s.logs, /^\x1b\[1;36m\(EngineCore_DP0 pid=\d+\)\x1b\[0;0m INFO .*\[kv_cache_utils\.py:1091\] Maximum concurrency for 65,536 tokens per request: [\d.]+x$/m);
    assert.match(s.logs, /^\x1b\[1;36m\(APIServer pid=\d+\)\x1b\[0;0m INFO: {5}Application startup complete\.$/m);
    assert.equal((s.json('NF')['error'] as { code: number }).code, 404);
  });

  test('0.10.0: flat errors {object:"error",...}; only the engine core prefixes its lines', async () => {
    const s = await serve({ vllmRelease: '0.10.0' }, '--served-model-name qwen38', (p) => chat(p, 'NF', '{"model":"nope","messages":[]}'));
    assert.deepEqual(s.json('NF'), { object: 'error', message: 'The model `nope` does not exist.', type: 'NotFoundError', param: null, code: 404 });
    assert.match(s.logs, /^INFO .*vLLM API server version 0\.10\.0$/m);
    assert.match(s.logs, /^\x1b\[1;36m\(EngineCore_0 pid=\d+\)\x1b\[0;0m INFO .*GPU KV cache size: [\d,]+ tokens$/m);
  });

  test('a chat request without model is answered by the first served name; usage has prompt_tokens_details', async () => {
    const s = await serve({}, '--served-model-name qwen38 qwen38-alias', (p) => [chat(p, 'NOMODEL', '{"messages":[{"role":"user","content":"hi"}],"max_tokens":4}'), chat(p, 'ALIAS', '{"model":"qwen38-alias","messages":[{"role":"user","content":"hi"}]}'), `printf 'MODELS '; curl -s localhost:${p}/v1/models; echo`, `printf 'HEALTH '; curl -s -D - -o /dev/null localhost:${p}/health | tr -d '\\r' | grep -ci '^content-length: 0$'`].join('\n'));
    const nm = s.json('NOMODEL') as { model: string; choices: { finish_reason: string; message: Record<string, unknown> }[]; usage: Record<string, unknown> };
    assert.equal(nm.model, 'qwen38');
    assert.equal(nm.choices[0]?.finish_reason, 'length', 'max_tokens 4 cuts the answer');
    assert.equal(nm.usage['completion_tokens'], 4);
    assert.ok('prompt_tokens_details' in nm.usage && nm.usage['prompt_tokens_details'] === null);
    assert.equal('tool_calls' in (nm.choices[0]?.message ?? {}), false, 'current vLLM drops an empty tool_calls');
    assert.equal((s.json('ALIAS') as { model: string }).model, 'qwen38', 'responses carry the first served name');
    const models = s.json('MODELS') as { data: { id: string; root: string; owned_by: string; max_model_len: number; permission: unknown[] }[] };
    assert.deepEqual(models.data.map((m) => [m.id, m.root, m.owned_by, m.max_model_len, m.permission.length]), [['qwen38', 'Qwen/Qwen3.8-Flash-Next', 'vllm', 65536, 1], ['qwen38-alias', 'Qwen/Qwen3.8-Flash-Next', 'vllm', 65536, 1]]);
    assert.match(s.out, /^HEALTH 1$/m, '/health answers 200 with an empty body');
  });

  test('VLLM_API_KEY guards /v1 only: 401 {"error":"Unauthorized"}, "bearer" in any case, --api-key wins', async () => {
    const s = await serve({}, '', (p) => [
      code(p, 'none', '/v1/models'), code(p, 'health', '/health'), code(p, 'lower', '/v1/models', "-H 'Authorization: bearer envkey'"),
      code(p, 'basic', '/v1/models', "-H 'Authorization: Basic envkey'"), code(p, 'wrong', '/v1/models', "-H 'Authorization: Bearer other'"),
      `printf 'BODY '; curl -s localhost:${p}/v1/models; echo`,
    ].join('\n'), '-e VLLM_API_KEY=envkey');
    assert.match(s.out, /^none=401$/m);
    assert.match(s.out, /^health=200$/m);
    assert.match(s.out, /^lower=200$/m);
    assert.match(s.out, /^basic=401$/m);
    assert.match(s.out, /^wrong=401$/m);
    assert.deepEqual(s.json('BODY'), { error: 'Unauthorized' });
    const both = await serve({ imageApiKey: 'imgkey' }, '--api-key clikey', (p) => [code(p, 'cli', '/v1/models', "-H 'Authorization: Bearer clikey'"), code(p, 'img', '/v1/models', "-H 'Authorization: Bearer imgkey'")].join('\n'));
    assert.match(both.out, /^cli=200$/m);
    assert.match(both.out, /^img=401$/m, '--api-key takes precedence over VLLM_API_KEY');
    const image = await serve({ imageApiKey: 'imgkey' }, '', (p) => code(p, 'img', '/v1/models', "-H 'Authorization: Bearer imgkey'"));
    assert.match(image.out, /^img=200$/m, "the image's own VLLM_API_KEY");
  });

  test('a thinking model whose max_tokens run out while it thinks: as each release and parser splits it', async () => {
    const req = '{"messages":[{"role":"user","content":"are you up?"}],"max_tokens":32}';
    type Msg = { content: string | null; reasoning?: string | null; reasoning_content?: string | null };
    type Chat = { choices: { message: Msg; finish_reason: string }[]; usage: { completion_tokens: number } };
    const cur = (await serve({ reasoningParser: 'qwen3' }, '', (p) => chat(p, 'C', req))).json('C') as Chat;
    assert.equal(cur.choices[0]?.finish_reason, 'length');
    assert.equal(cur.choices[0]?.message.content, null);
    assert.match(cur.choices[0]?.message.reasoning ?? '', /^Okay, the user asks/);
    assert.equal(cur.usage.completion_tokens, 32);
    const old = (await serve({ vllmRelease: '0.11.0', reasoningParser: 'qwen3' }, '', (p) => chat(p, 'C', req))).json('C') as Chat;
    assert.match(old.choices[0]?.message.content ?? '', /^<think>\nOkay/, '0.11 qwen3 parser: no </think>, all text is content');
    assert.equal(old.choices[0]?.message.reasoning_content, null);
    const r1 = (await serve({ vllmRelease: '0.11.0' }, '--reasoning-parser deepseek_r1', (p) => chat(p, 'C', req))).json('C') as Chat;
    assert.equal(r1.choices[0]?.message.content, null);
    assert.match(r1.choices[0]?.message.reasoning_content ?? '', /^Okay/);
    const full = (await serve({ reasoningParser: 'qwen3' }, '', (p) => chat(p, 'C', req.replace('32', '400')))).json('C') as Chat;
    assert.equal(full.choices[0]?.finish_reason, 'stop');
    assert.equal(full.choices[0]?.message.content, 'Yes, I am up and ready to help.');
    assert.match(full.choices[0]?.message.reasoning ?? '', /one short sentence and nothing more\.\n?$/);
  });
});
