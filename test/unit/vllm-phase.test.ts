/**
 * The server's phase from its log's tail (runtime/vllm/phase.ts, issue 18 item 2), on excerpts shaped as the
 * releases print them: the V0 engine (0.6), 0.10.0 (`(EngineCore_0 pid=N)`, ANSI), 0.11.0 (`(EngineCore_DP0 pid=N)`
 * on every line, ANSI) and the current release (`(EngineCore pid=N)`, plain), tqdm's `\r` updates included.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phaseOfLine, readServerLog, serverLogOf, TAIL_CHARS } from '../../runtime/vllm/phase.js';

const cyan = (s: string) => `\x1b[1;36m${s}\x1b[0;0m `;
const E11 = cyan('(EngineCore_DP0 pid=241)');
const A11 = cyan('(APIServer pid=1)');
const E10 = cyan('(EngineCore_0 pid=88)');
const E33 = '(EngineCore pid=8878) ';
const A33 = '(APIServer pid=8801) ';

const phase = (tail: string) => readServerLog(tail).phase;

test('current release: each phase from its line, the latest known line wins', () => {
  const lines = [
    `${A33}INFO 12-03 09:00:01 [api_server.py:1839] vLLM API server version 0.33.0`,
    `${E33}INFO 12-03 09:00:09 [gpu_model_runner.py:2602] Starting to load model Qwen/Qwen3.8-Flash-Next...`,
    '\rLoading safetensors checkpoint shards:  61% Completed | 23/38 [05:12<03:18,  0.07it/s]',
  ];
  assert.deepEqual(phase(lines.slice(0, 1).join('\n')), { id: 'starting', words: 'starting the engine' });
  assert.deepEqual(phase(lines.slice(0, 2).join('\n')), { id: 'weights', words: 'loading weights' });
  assert.deepEqual(phase(lines.join('\n')), { id: 'weights', words: 'loading weights 23/38', done: 23, total: 38 });
  const more = [
    ...lines,
    `${E33}INFO 12-03 09:09:40 [gpu_model_runner.py:2653] Model loading took 43.6128 GiB memory and 571.100000 seconds`,
    `${E33}INFO 12-03 09:10:02 [backends.py:218] Compiling a graph for compile range (1, 16384) takes 20.50 s`,
  ];
  assert.equal(phase(more.slice(0, 4).join('\n'))?.words, 'weights loaded (43.6128 GiB)');
  assert.deepEqual(phase(more.join('\n')), { id: 'compiling', words: 'compiling (torch.compile)' });
  const kv = [...more, `${E33}INFO 12-03 09:11:53 [kv_cache_utils.py:1147] GPU KV cache size: 1,574,624 tokens, Maximum concurrency for 262,144 tokens per request: 6.01x`];
  assert.deepEqual(phase(kv.join('\n')), { id: 'kv-cache', words: 'KV cache allocated (1,574,624 tokens)' });
  const ready = [...kv, `${A33}INFO 12-03 09:13:10 [api_server.py:1912] Starting vLLM API server 0 on http://0.0.0.0:8000`, 'INFO:     Application startup complete.'];
  assert.deepEqual(phase(ready.slice(0, -1).join('\n')), { id: 'api-server', words: 'API server starting' });
  assert.deepEqual(phase(ready.join('\n')), { id: 'api-server', words: 'API server up' });
});

test('CUDA graph capture: tqdm updates joined by \\r in one line, the last update counts', () => {
  const bar = (k: number) => `\rCapturing CUDA graphs (mixed prefill-decode, PIECEWISE): ${String(Math.round((k / 67) * 100)).padStart(3)}%|████▌     | ${k}/67 [00:02<00:02, 14.10it/s]`;
  const line = `${E11}${[0, 1, 2, 30].map(bar).join('')}`;
  assert.deepEqual(phase(line), { id: 'cuda-graphs', words: 'CUDA graph capture 30/67', done: 30, total: 67 });
  // docker's copier flushes a 16 KB piece of a line that has no newline yet: a cut update is skipped, not misread.
  assert.deepEqual(phase(`${line}\rCapturing CUDA graphs (decode, FULL):  4`), { id: 'cuda-graphs', words: 'CUDA graph capture' });
  assert.equal(phase(`${E33}INFO 12-03 09:12:40 [gpu_model_runner.py:3480] Graph capturing finished in 31 secs, took 0.52 GiB`)?.words, 'CUDA graphs captured');
  // 0.10.0's desc
  assert.equal(phase(`${E10}\rCapturing CUDA graph shapes: 100%|██████████| 67/67 [00:31<00:00,  2.15it/s]`)?.words, 'CUDA graph capture 67/67');
});

test('0.11.0: every line ANSI-prefixed, the older compile and loading words', () => {
  const tail = [
    `${E11}INFO 10-14 22:47:10 [default_loader.py:262] Loading weights took 41.27 seconds`,
    `${E11}INFO 10-14 22:47:11 [gpu_model_runner.py:2653] Model loading took 15.2716 GiB and 42.018811 seconds`,
    `${E11}INFO 10-14 22:48:36 [backends.py:559] Dynamo bytecode transform time: 5.80 s`,
    `${E11}INFO 10-14 22:49:05 [backends.py:218] Compiling a graph for dynamic shape takes 28.96 s`,
    `${E11}INFO 10-14 22:49:17 [monitor.py:34] torch.compile takes 34.76 s in total`,
  ];
  assert.equal(phase(tail.slice(0, 2).join('\n'))?.words, 'weights loaded (15.2716 GiB)');
  assert.equal(phase(tail.slice(0, 4).join('\n'))?.id, 'compiling');
  assert.equal(phase(tail.join('\n'))?.words, 'compiled (torch.compile), profiling memory');
  const kv = [...tail, `${E11}INFO 10-14 22:49:20 [gpu_worker.py:298] Available KV cache memory: 37.48 GiB`];
  assert.equal(phase(kv.join('\n'))?.words, 'sizing the KV cache (37.48 GiB free)');
  const two = [...kv, `${E11}INFO 10-14 22:49:21 [kv_cache_utils.py:1087] GPU KV cache size: 818,880 tokens`, `${E11}INFO 10-14 22:49:21 [kv_cache_utils.py:1091] Maximum concurrency for 131,072 tokens per request: 6.25x`];
  assert.equal(phase(two.join('\n'))?.words, 'KV cache allocated (818,880 tokens)');
  assert.equal(phase(`${A11}INFO:     Application startup complete.`)?.words, 'API server up');
  // The same tail as the probe record carries it: pulse_json_str drops ESC, leaving `[1;36m` behind.
  assert.equal(phase(two.join('\n').replace(/\x1b/g, ''))?.words, 'KV cache allocated (818,880 tokens)');
  assert.equal(readServerLog(two.join('\n').replace(/\x1b/g, '')).lastLine, 'Maximum concurrency for 131,072 tokens per request: 6.25x');
});

test('the V0 engine (0.6): weights in GB, GPU blocks, capture without a count', () => {
  assert.equal(phaseOfLine('INFO 01-12 10:00:00 model_runner.py:1072] Loading model weights took 14.9888 GB')?.words, 'weights loaded (14.9888 GiB)');
  assert.equal(phaseOfLine('INFO 01-12 10:00:20 gpu_executor.py:122] # GPU blocks: 27898, # CPU blocks: 2048')?.words, 'KV cache allocated (27898 blocks)');
  assert.equal(phaseOfLine('INFO 01-12 10:00:22 model_runner.py:1402] Capturing the model for CUDA graphs. This may lead to unexpected consequences')?.id, 'cuda-graphs');
  assert.equal(phaseOfLine('Loading pt checkpoint shards:  50% Completed | 1/2 [00:03<00:03,  3.10s/it]')?.words, 'loading weights 1/2');
});

test('an unknown line never breaks it: no phase, and the last line without prefix or logger head', () => {
  const r = readServerLog(`${E33}WARNING 12-03 09:00:03 [config.py:100] some future warning nobody knows\n\n`);
  assert.equal(r.phase, null);
  assert.equal(r.lastLine, 'WARNING some future warning nobody knows');
  // A known phase followed by unknown lines keeps the phase; the last line is the unknown one.
  const k = readServerLog(`${E33}INFO 12-03 09:10:02 [backends.py:218] Compiling a graph for compile range (1, 8192) takes 20.50 s\n${E33}INFO 12-03 09:10:03 [x.py:1] something new`);
  assert.equal(k.phase?.id, 'compiling');
  assert.equal(k.lastLine, 'something new');
  for (const junk of ['', '\r\r\n\n', '\x00\x07\x1b', 'x'.repeat(3 * TAIL_CHARS), '\uFFFD\uFFFD (cut utf-8)', null, undefined]) {
    assert.doesNotThrow(() => readServerLog(junk as string));
  }
  assert.equal(readServerLog('y'.repeat(1000)).lastLine?.length, 160);
});

test('a heartbeat phase is taken back only when well-formed (a resumed wait, status)', () => {
  assert.deepEqual(serverLogOf({ phase: { id: 'weights', words: 'loading weights 2/3', done: 2, total: 3 }, lastLine: 'x' }), { phase: { id: 'weights', words: 'loading weights 2/3', done: 2, total: 3 }, lastLine: 'x' });
  assert.deepEqual(serverLogOf({ phase: { id: 'nope', words: 'x' }, lastLine: 7 }), {});
  assert.deepEqual(serverLogOf(null), {});
});
