/**
 * The simulated vLLM against what vLLM's source does (docs/SIMULATOR.md "Fidelity", vLLM table): the release
 * switch (log prefixes, the KV cache in one line or two, error shapes, the reasoning field), the API key from
 * --api-key or VLLM_API_KEY on /v1 only, a chat request without `model`, the usage block, /v1/models and /health,
 * SIGTERM with --shutdown-timeout 0 and N (the answers finish_reason "abort"), a dead engine's 500.
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

  /** Until the server's /metrics shows `n` completions running (a request in flight, without a fixed sleep). */
  const running = (p: number, n: number) => `for i in $(seq 200); do curl -s localhost:${p}/metrics | grep -q '^vllm:num_requests_running{.*} ${n}\\.0$' && break; sleep 0.05; done`;
  const streamReq = '{"messages":[{"role":"user","content":"are you up?"}],"stream":true}';
  const plainReq = '{"messages":[{"role":"user","content":"are you up?"}]}';
  const post = (p: number, body: string, out: string) => `curl -sN -H 'content-type: application/json' -d '${body}' localhost:${p}/v1/chat/completions >${out}`;

  test('SIGTERM with --shutdown-timeout 0 (the default): every request in flight is answered at once, HTTP 200, finish_reason "abort"; exit 0', async () => {
    const s = await serve({ generationMs: 60_000 }, '--served-model-name qwen38', (p) => [
      'd=$(mktemp -d)', `${post(p, streamReq, '$d/s')} &`, `${post(p, plainReq, '$d/p')} &`, running(p, 2),
      't0=$(date +%s%N)', `docker stop -t 10 ${CONTAINER_NAME} >/dev/null`, 'echo "STOPMS=$((($(date +%s%N) - t0) / 1000000))"', 'wait',
      `echo "ABORTCHUNK=$(grep -c '"finish_reason":"abort"' $d/s) DONE=$(grep -c '^data: \\[DONE\\]' $d/s)"`,
      'printf "PLAIN "; cat $d/p; echo', `echo "EXIT=$(docker inspect -f '{{.State.ExitCode}}' ${CONTAINER_NAME})"`,
    ].join('\n'));
    assert.match(s.out, /^ABORTCHUNK=1 DONE=1$/m, 'the stream ends with an abort finish chunk, then [DONE]');
    const plain = s.json('PLAIN') as { choices: { finish_reason: string }[] };
    assert.equal(plain.choices[0]?.finish_reason, 'abort');
    assert.match(s.out, /^EXIT=0$/m);
    assert.ok(Number(/^STOPMS=(\d+)$/m.exec(s.out)?.[1]) < 5000, `vLLM exits within moments, not at docker's 10 s: ${s.out}`);
  });

  test('SIGTERM with --shutdown-timeout N: what runs finishes, /health stays 200, a request that arrives meanwhile is answered 200 "abort"', async () => {
    const s = await serve({ generationMs: 2000 }, '--served-model-name qwen38 --shutdown-timeout 30', (p) => [
      'd=$(mktemp -d)', `${post(p, streamReq, '$d/s')} &`, running(p, 1),
      `docker kill -s TERM ${CONTAINER_NAME} >/dev/null`,
      `for i in $(seq 100); do docker logs ${CONTAINER_NAME} 2>&1 | grep -q 'Shutting down FastAPI HTTP server' && break; sleep 0.05; done`,
      code(p, 'HEALTH', '/health'), `${post(p, plainReq, '$d/late')}`, 'printf "LATE "; cat $d/late; echo', 'wait',
      `echo "STREAM stop=$(grep -c '"finish_reason":"stop"' $d/s) abort=$(grep -c '"finish_reason":"abort"' $d/s)"`,
      `echo "EXIT=$(docker wait ${CONTAINER_NAME})"`,
    ].join('\n'));
    assert.match(s.out, /^HEALTH=200$/m, '/health answers 200 until the engine is gone');
    const late = s.json('LATE') as { choices: { finish_reason: string }[] };
    assert.equal(late.choices[0]?.finish_reason, 'abort', 'the engine takes no new work: answered at once, HTTP 200');
    assert.match(s.out, /^STREAM stop=1 abort=0$/m, 'the request in flight when the signal came finished');
    assert.match(s.out, /^EXIT=0$/m);
  });

  test('a dead engine: completions answer 500 with no body (launcher.py runtime_exception_handler), /health 503', async () => {
    const n = sim.node('spark1');
    n.setControl({ ...DEFAULT_CONTROL, readyDelayMs: 100 });
    const p = n.vllmPort;
    const started = await sshScript(sim, 'spark1', `docker run -d --name ${CONTAINER_NAME} --gpus all --network host ${PROFILE_IMAGE} vllm serve Qwen/Qwen3.8-Flash-Next --port ${p} --host 127.0.0.1 >/dev/null
for i in $(seq 200); do curl -s -o /dev/null localhost:${p}/health && break; sleep 0.05; done`);
    assert.equal(started.code, 0, started.stderr);
    n.setControl({ engineDead: true });
    try {
      const r = await sshScript(sim, 'spark1', [code(p, 'health', '/health'), code(p, 'models', '/v1/models'), `echo "chat=$(curl -s -o /dev/null -w '%{http_code}:%{size_download}' -H 'content-type: application/json' -d '${plainReq}' localhost:${p}/v1/chat/completions)"`].join('\n'));
      assert.match(r.stdout, /^health=503$/m);
      assert.match(r.stdout, /^models=200$/m, 'the model list needs no engine');
      assert.match(r.stdout, /^chat=500:0$/m, 'a completion needs the engine: 500, empty body');
    } finally {
      n.setControl({ engineDead: false });
      await sshScript(sim, 'spark1', `docker rm -f ${CONTAINER_NAME} >/dev/null`);
    }
  });
});
