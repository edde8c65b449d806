/**
 * The simulated vLLM server: the process a simulated container runs for `vllm serve MODEL ...`. An
 * OpenAI-compatible HTTP server (GET /v1/models, POST /v1/chat/completions, GET /health) that behaves as the
 * node's `vllmRelease` does (test/sim/vllm-release.ts): it wants the bearer key of --api-key or VLLM_API_KEY on
 * every path under /v1 (never /health), becomes ready after the node's ready delay, logs vLLM's lines with the
 * release's process prefixes, fails on request (the node's control file; `engineDead`: /health 503 while /v1
 * still answers), and records every request it receives in SIM_STATE/requests.jsonl. Its completions take the
 * node's `generationMs` (streamed ones send their tokens over it), its GET /metrics shows how many run and wait, and
 * each one a stop cuts is recorded (vllm-metrics.ts).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { appendJsonLine, readControl } from './control.js';
import type { NodeControl } from './control.js';
import { chatCompletion, streamChunks, wantsStream } from './vllm-chat.js';
import type { ChatAnswer, ChatSetup } from './vllm-chat.js';
import { DEFAULT_MAX_NUM_SEQS, Inflight, metricsPage } from './vllm-metrics.js';
import { ContainerLog, kvCacheLines, kvCacheTokens, proofLines } from './vllm-log.js';
import { logCompile, logGraphs, logWeights } from './vllm-startup.js';
import { traitsOf } from './vllm-release.js';
import { gpuProcesses } from './gpu.js';

interface ServeArgs {
  id: string;
  model: string;
  /** The first value of each flag ("true" for a flag without one). */
  flags: Record<string, string>;
  /** Every value of each flag: `--served-model-name a b` and `--api-key k1 k2` take several (nargs="+"). */
  lists: Record<string, string[]>;
}

/** Parses `--sim-id=ID serve MODEL --flag value [value...] ...` (flags without a value become "true"). */
export function parseServe(argv: string[]): ServeArgs {
  const id = (argv.find((a) => a.startsWith('--sim-id=')) ?? '').slice(9);
  const rest = argv.filter((a) => !a.startsWith('--sim-id='));
  if (rest[0] !== 'serve' || !rest[1]) throw new Error(`vllm: expected "serve MODEL", got: ${rest.join(' ')}`);
  const flags: Record<string, string> = {};
  const lists: Record<string, string[]> = {};
  for (let i = 2; i < rest.length; i++) {
    const a = rest[i]!;
    if (!a.startsWith('--')) continue;
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    const values = eq > 0 ? [a.slice(eq + 1)] : [];
    while (eq < 0 && rest[i + 1] !== undefined && !rest[i + 1]!.startsWith('--')) values.push(rest[++i]!);
    lists[name] = values.length ? values : ['true'];
    flags[name] = lists[name][0]!;
  }
  return { id, model: rest[1], flags, lists };
}

/**
 * The node's sim state dir: the stand-in GPU hook shows it in a `--gpus` container at /run/pulse-sim (a stray server
 * outside docker gets SIM_STATE). Without it the container has no GPU, and vLLM fails as it does without CUDA.
 */
const stateDir = process.env.SIM_STATE ?? '/run/pulse-sim';
const hasGpu = fs.existsSync(path.join(stateDir, 'control.json'));
const startControl = readControl(stateDir);
// A stray server (stray.ts) sets its own ready delay, and may wait for the node's container before it listens.
if (process.env.SIM_READY_DELAY_MS) startControl.readyDelayMs = Number(process.env.SIM_READY_DELAY_MS);
const traits = traitsOf(startControl.vllmRelease);
const log = new ContainerLog(startControl.vllmRelease);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Mount points of this process (/proc/self/mountinfo field 5): in a container, the targets of its -v mounts. */
function mountTargets(): string[] {
  try {
    return fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m !== '');
  } catch {
    return [];
  }
}

/** This container's id: the engine bind-mounts its /etc/hostname from `<data-root>/containers/<id>/hostname`. */
function containerId(fallback: string): string {
  try {
    return /\/containers\/([0-9a-f]{64})\//.exec(fs.readFileSync('/proc/self/mountinfo', 'utf8'))?.[1] ?? fallback;
  } catch {
    return fallback;
  }
}

/** Each completion still running when the process exits is cut (vllm-metrics.ts; a SIGKILL writes nothing, and counts too). */
process.on('exit', () => completions?.cutAll());

/**
 * SIGTERM as vLLM handles it: while the engine loads, api_server.py's handler raises KeyboardInterrupt
 * ("terminated"), which ends the process the way an uncaught KeyboardInterrupt ends CPython (killed by SIGINT:
 * docker records 130). Once it serves, vLLM's shutdown follows --shutdown-timeout (default 0): with 0 every request
 * in flight is aborted at once (its answer, HTTP 200, ends with finish_reason "abort"; vLLM's own shutdown test,
 * test_abort_timeout_fails_inflight_requests), and the process exits 0 within moments. With N > 0 the engine finishes
 * what runs for up to N s while the HTTP listener still accepts: /health stays 200 until the engine is gone, and a
 * completion that arrives meanwhile is answered at once, HTTP 200 with finish_reason "abort" (the engine takes no new
 * work); what still runs after N s is aborted the same way. A drain longer than `docker stop -t` ends in SIGKILL
 * (137). A second signal changes nothing (launcher.py ignores a duplicate shutdown signal).
 */
let serving: http.Server | null = null;
/** The completions being generated (set once the server serves). */
let completions: Inflight | null = null;
/** Set by SIGTERM: every completion still generating ends now with finish_reason "abort". */
let aborting = false;
let abortNow: () => void = () => undefined;
const aborted = new Promise<void>((resolve) => (abortNow = resolve));
/** Whether the shutdown began (a completion that arrives then is aborted at once). */
let stopping = false;
/** The answers not yet written out: the exit waits for them (an aborted answer must reach its client). */
const answering = new Set<http.ServerResponse>();
/** Sleeps `ms`, or less when the shutdown aborts the completions. */
const abortable = (ms: number): Promise<unknown> => Promise.race([sleep(ms), aborted]);

function abortAllAndExit(): void {
  aborting = true;
  abortNow();
  const exitAt = Date.now() + 2000;
  const exit = () => (answering.size === 0 || Date.now() >= exitAt ? process.exit(0) : setTimeout(exit, 10));
  setTimeout(exit, 10);
}

process.on('SIGTERM', () => {
  if (!serving) {
    log.write('stderr', 'KeyboardInterrupt: terminated');
    // CPython ends an uncaught KeyboardInterrupt by SIGINT with the default action; as a container's PID 1 the
    // kernel drops that signal, and CPython then exits 130 (exit_sigint in Modules/main.c): docker sees 130 either way.
    process.removeAllListeners('SIGINT');
    process.kill(process.pid, 'SIGINT');
    setTimeout(() => process.exit(130), 20);
    return;
  }
  if (stopping) return;
  stopping = true;
  log.info('launcher.py:80', 'Shutting down FastAPI HTTP server.');
  const until = Date.now() + Number(parsed.flags['shutdown-timeout'] ?? 0) * 1000;
  const tick = () => {
    if ((completions?.size ?? 0) === 0 || Date.now() >= until) abortAllAndExit();
    else setTimeout(tick, 50);
  };
  tick();
});

function logKvCache(args: ServeArgs, maxLen: number): void {
  const util = Number(args.flags['gpu-memory-utilization'] ?? 0.9);
  const tokens = kvCacheTokens(util, args.flags['kv-cache-dtype'] ?? 'auto');
  kvCacheLines(traits, tokens, maxLen).forEach(([source, line]) => log.engine(source, line));
}

/** The model's own context length (its config.json), used without --max-model-len or with `auto`/-1. */
const MODEL_MAX_LEN = 262144;

/**
 * `--max-model-len` as argparse hands it to vLLM (human_readable_int: 524288, 512K = 2^19, 524.288k; current
 * releases also `auto` or -1: the model's own length). null: argparse refuses it.
 */
function maxModelLen(raw: string | undefined): number | null {
  if (raw === undefined) return MODEL_MAX_LEN;
  if (traits.maxModelLenAuto && (raw === 'auto' || raw === '-1')) return MODEL_MAX_LEN;
  const m = /^(\d+(?:\.\d+)?)([kKmMgGtT]?)$/.exec(raw.trim());
  if (!m) return null;
  const n = Number(m[1]);
  const suffix = m[2] ?? '';
  if (suffix === '') return Number.isInteger(n) ? n : null;
  const dec: Record<string, number> = { k: 1e3, m: 1e6, g: 1e9, t: 1e12 };
  if (suffix in dec) return Math.floor(n * dec[suffix]!);
  return Number.isInteger(n) ? n * 1024 ** ('KMGT'.indexOf(suffix) + 1) : null;
}

/**
 * Python's repr() of a str (Objects/unicodeobject.c unicode_repr): single quotes unless the text holds a single quote
 * and no double quote; the backslash, the chosen quote and control characters escaped.
 */
function pyRepr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const c of s) {
    const code = c.codePointAt(0) ?? 0;
    if (c === '\\' || c === q) out += `\\${c}`;
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += c;
  }
  return `${q}${out}${q}`;
}

async function startUp(args: ServeArgs, control: NodeControl): Promise<void> {
  if (!hasGpu) {
    // A container without --gpus (or whose hook did not run) sees no device: vLLM's platform detection fails.
    log.write('stderr', 'RuntimeError: Failed to infer device type (no NVIDIA GPU is visible in this container: run it with --gpus)');
    process.exit(1);
  }
  const maxLen = maxModelLen(args.flags['max-model-len']);
  if (maxLen === null) {
    log.write('stderr', `vllm serve: error: argument --max-model-len: invalid human_readable_int value: '${args.flags['max-model-len']}'`);
    process.exit(2);
  }
  if (process.env.SIM_VLLM_BIND_ERROR) {
    // create_server_socket runs before anything loads: a port held without SO_REUSEPORT fails the start at once.
    log.write('stderr', `OSError: ${process.env.SIM_VLLM_BIND_ERROR}`);
    process.exit(1);
  }
  log.info('api_server.py:1839', `vLLM API server version ${traits.version}`);
  // vllm/entrypoints/utils.py log_non_default_args: logger.info("non-default args: %s", dict), so every value is
  // printed as Python's repr prints it, the --api-key list included (vLLM does not redact it): a key with a
  // backslash or a quote appears escaped.
  const apiKey = args.lists['api-key'] ? `'api_key': [${args.lists['api-key'].map(pyRepr).join(', ')}], ` : '';
  log.info('utils.py:326', `non-default args: {${apiKey}'model': ${pyRepr(args.model)}, 'served_model_name': [${pyRepr(args.flags['served-model-name'] ?? args.model)}], 'max_model_len': ${maxLen}}`);
  if (control.failure === 'page-cache-held') {
    // The worker's init_device compares the free memory of a MemorySnapshot with --gpu-memory-utilization of the total
    // (vllm/v1/worker/gpu_worker.py); on a DGX Spark the total is the unified memory and the page cache is not free.
    await sleep(Math.min(200, control.readyDelayMs));
    const util = Number(args.flags['gpu-memory-utilization'] ?? 0.9);
    const total = 119.7;
    log.engine('core.py:700', 'EngineCore failed to start.', 'ERROR');
    log.write('stderr', 'Traceback (most recent call last):', 'EngineCore');
    log.write('stderr', `ValueError: Free memory on device cuda:0 (61.05/${total} GiB) on startup is less than desired GPU memory utilization (${util}, ${(total * util).toFixed(2)} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.`, 'EngineCore');
    log.write('stderr', 'RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}');
    process.exit(1);
  }
  if (control.failure === 'crash-at-start') {
    await sleep(Math.min(200, control.readyDelayMs));
    log.engine('core.py:700', 'EngineCore failed to start.', 'ERROR');
    log.write('stderr', 'RuntimeError: CUDA error: out of memory (simulated crash at start)', 'EngineCore');
    process.exit(1);
  }
  // The cold start's phases on the node's ready delay (vllm-startup.ts): weights to 45 %, death at 50 %, compile and
  // KV cache to 72 %, CUDA graphs to 97 %, the API server at 100 %.
  const delay = control.readyDelayMs;
  await logWeights(log, traits, args.model, delay);
  for (const line of proofLines(process.env, mountTargets())) log.engine('qwen3_next_mtp.py:118', line);
  await sleep(delay * 0.05);
  if (control.failure === 'die-during-readiness') {
    log.write('stderr', 'RuntimeError: Engine core initialization failed (simulated death during readiness)', 'EngineCore');
    process.exit(1);
  }
  await logCompile(log, traits, delay);
  // A test's hold in a phase of the cold start (sizing the KV cache), where holdReady would sit after them all.
  while (readControl(stateDir).holdPhase) await sleep(50);
  logKvCache(args, maxLen);
  if (control.failure === 'never-ready') {
    // Hangs as a CUDA graph capture that never ends: tqdm's line never gets its newline, so docker logs nothing more.
    await sleep(delay * 0.28);
    setInterval(() => undefined, 1 << 30); // stays alive, never listens
    return;
  }
  await logGraphs(log, traits, delay);
  await sleep(delay * 0.03);
  while (readControl(stateDir).holdReady) await sleep(50); // a test holds the listen until its fault is over
  await serve(args, control, maxLen);
}

/** Resolves once the node's GPU runs a container started after this process (SIM_LISTEN_AFTER: a stray waits). */
async function containerStarted(): Promise<void> {
  const since = Date.now() - process.uptime() * 1000;
  for (;;) {
    if (gpuProcesses(stateDir).some((r) => Date.parse(r.at) >= since - 50)) return;
    await sleep(20);
  }
}

async function serve(args: ServeArgs, control: NodeControl, maxLen: number): Promise<void> {
  if (process.env.SIM_LISTEN_AFTER) await containerStarted();
  const server = http.createServer((req, res) => void handle(req, res, args, control, maxLen));
  server.on('error', (err) => {
    log.write('stderr', `OSError: [Errno 98] error while attempting to bind: ${err.message}`);
    process.exit(1);
  });
  serving = server;
  completions = new Inflight(stateDir, Number(args.flags['max-num-seqs'] ?? DEFAULT_MAX_NUM_SEQS));
  // uvicorn runs the app's startup before it listens on the socket vLLM bound (vllm-bind.ts): until then a connect
  // is refused; listening on it makes the port answer. Its Server.startup logs the lifespan's lines first, then
  // create_server listens: `Application startup complete.` comes just BEFORE the port answers, as on a real node.
  log.info('api_server.py:1912', `Starting vLLM API server 0 on http://${args.flags.host ?? '0.0.0.0'}:${args.flags.port ?? 8000}`);
  const fd = Number(process.env.SIM_VLLM_FD ?? NaN);
  const where = Number.isInteger(fd) ? { fd } : { port: Number(args.flags.port ?? 8000), host: args.flags.host ?? '0.0.0.0' };
  log.write('stderr', `INFO:     Started server process [${process.pid}]`);
  log.write('stderr', 'INFO:     Waiting for application startup.');
  log.write('stderr', 'INFO:     Application startup complete.');
  // When the port first answers (an outside observer probing in a tight loop would see it): bench/user-view.ts.
  server.listen(where, () => appendJsonLine(path.join(stateDir, 'listening.jsonl'), { at: new Date().toISOString(), container: args.id.slice(0, 12) }));
}

function reply(res: http.ServerResponse, status: number, body: unknown): number {
  if (body === undefined) res.writeHead(status, { 'content-length': '0' }).end();
  else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  return status;
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The keys the server wants (vllm/entrypoints/openai/api_server.py: `--api-key` wins over VLLM_API_KEY; the image's
 * own VLLM_API_KEY is the node control `imageApiKey`); none: no key is needed.
 */
function apiKeys(args: ServeArgs): string[] {
  const env = process.env.VLLM_API_KEY ?? startControl.imageApiKey ?? undefined;
  return (args.lists['api-key'] ?? (env ? [env] : [])).filter((k) => k !== '');
}

/** AuthenticationMiddleware.verify_token: `<scheme> <token>` split at the first space, the scheme in any case. */
function keyMatches(header: string | undefined, keys: string[]): boolean {
  if (!header) return false;
  const sp = header.indexOf(' ');
  const [scheme, token] = sp < 0 ? [header, ''] : [header.slice(0, sp), header.slice(sp + 1)];
  return scheme.toLowerCase() === 'bearer' && keys.includes(token);
}

/**
 * The engine core of this server process: dead while the control says so, unless this process started while it
 * already said so (a restart brings a new engine up, as a real vLLM's restart does); once the control goes false
 * and true again, this engine dies too.
 */
let bornWhileDead = startControl.engineDead;
function engineDeadNow(): boolean {
  const dead = readControl(stateDir).engineDead;
  if (!dead) bornWhileDead = false;
  return dead && !bornWhileDead;
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, args: ServeArgs, control: NodeControl, maxLen: number): Promise<void> {
  const body = await readBody(req);
  const url = (req.url ?? '/').split('?')[0]!;
  const keys = apiKeys(args);
  const authorized = keys.length === 0 || keyMatches(req.headers.authorization, keys);
  if (control.failure === 'slow') await sleep(control.slowMs);
  let status: number;
  let model: string | undefined;
  const guarded = url.startsWith('/v1') && req.method !== 'OPTIONS';
  if (guarded && !authorized) status = reply(res, 401, { error: 'Unauthorized' });
  // vllm/entrypoints/serve/instrumentator/health.py: check_health(), 200 with no body, 503 on EngineDeadError.
  else if (req.method === 'GET' && url === '/health') status = reply(res, engineDeadNow() ? 503 : 200, undefined);
  else if (req.method === 'GET' && url === '/v1/models') status = reply(res, 200, modelList(args, control, maxLen));
  else if (req.method === 'GET' && url === '/metrics') {
    // vllm/entrypoints/serve: the Prometheus app is mounted at /metrics, outside /v1 (no key needed).
    const live = readControl(stateDir);
    if (live.metricsMissing) status = reply(res, 404, { detail: 'Not Found' });
    else {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(metricsPage(servedNames(args, control)[0] ?? args.model, completions?.running ?? 0, completions?.waiting ?? 0, live.metricsLie));
      status = 200;
    }
  } else if (req.method === 'POST' && url === '/v1/chat/completions' && engineDeadNow()) {
    // launcher.py _add_shutdown_handlers: EngineDeadError is answered by runtime_exception_handler, HTTP 500, no body.
    status = reply(res, 500, undefined);
  } else if (req.method === 'POST' && url === '/v1/chat/completions') {
    const answer = chatCompletion(chatSetup(args, control, maxLen), body);
    status = await complete(res, answer, wantsStream(body), readControl(stateDir).generationMs);
    model = answer.model;
  } else status = reply(res, 404, { detail: 'Not Found' });
  appendJsonLine(path.join(stateDir, 'requests.jsonl'), {
    at: new Date().toISOString(),
    container: args.id.slice(0, 12),
    method: req.method,
    path: url,
    authorized: Boolean(req.headers.authorization) && authorized,
    status,
    model,
    requestId: req.headers['x-request-id'],
  });
}

/**
 * Sends a completion that takes `ms` to generate: in flight (vllm:num_requests_running) until its last byte. A stream
 * sends its chunks over that time; a plain answer comes whole at its end. A client that leaves ends it early; a test's
 * holdGeneration keeps it from ending. The shutdown aborts it (and one that arrives during it, at once): the answer
 * ends then with finish_reason "abort", and the record counts it cut.
 */
async function complete(res: http.ServerResponse, answer: ChatAnswer, stream: boolean, ms: number): Promise<number> {
  if (answer.status !== 200 || !completions) return reply(res, answer.status, answer.body);
  const inflight = completions;
  const id = inflight.begin(stream);
  answering.add(res);
  let gone = false;
  res.once('close', () => {
    gone = true;
    answering.delete(res);
    inflight.end(id);
  });
  // One that arrives during the shutdown is aborted at once (the engine takes no new work); one in flight when it
  // began runs on until the grace ends.
  const late = stopping;
  const cut = (): boolean => late || aborting;
  const held = async (): Promise<void> => {
    while (!gone && !cut() && readControl(stateDir).holdGeneration) await abortable(50);
  };
  const finish = (): void => (cut() ? inflight.abort(id) : inflight.end(id));
  if (!stream) {
    if (!cut()) await abortable(ms);
    await held();
    finish();
    if (!gone) reply(res, 200, cut() ? abortedBody(answer) : answer.body);
    return answer.status;
  }
  const chunks = streamChunks(answer);
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (const [i, c] of chunks.entries()) {
    const last = i === chunks.length - 2;
    if (cut() && i > 0 && i < chunks.length - 2) continue; // aborted: no more tokens, the finish chunk says so
    if (last) await held(); // the finish chunk and [DONE] wait for a test's hold
    if (gone) break;
    res.write(`data: ${last && cut() ? abortChunk(c) : c}\n\n`);
    if (i < chunks.length - 2 && !cut()) await abortable(ms / Math.max(1, chunks.length - 1));
  }
  finish();
  if (!gone) res.end();
  return answer.status;
}

/** A plain answer cut by the shutdown: what it had (nothing, in the sim), finish_reason "abort". */
function abortedBody(answer: ChatAnswer): unknown {
  const b = answer.body as { choices: { message: Record<string, unknown>; finish_reason: string }[]; usage: Record<string, unknown> };
  const choices = b.choices.map((c) => ({ ...c, message: { ...c.message, content: '' }, finish_reason: 'abort' }));
  return { ...b, choices, usage: { ...b.usage, completion_tokens: 0, total_tokens: b.usage['prompt_tokens'] } };
}

/** The finish chunk of a stream cut by the shutdown: finish_reason "abort". */
function abortChunk(chunk: string): string {
  const c = JSON.parse(chunk) as { choices: { finish_reason: string | null }[] };
  return JSON.stringify({ ...c, choices: c.choices.map((x) => ({ ...x, finish_reason: 'abort' })) });
}

function servedNames(args: ServeArgs, control: NodeControl): string[] {
  return control.failure === 'wrong-model' ? [args.model] : (args.lists['served-model-name'] ?? [args.model]);
}

function chatSetup(args: ServeArgs, control: NodeControl, maxLen: number): ChatSetup {
  const parser = args.flags['reasoning-parser'] ?? control.reasoningParser ?? null;
  return { traits, served: servedNames(args, control), maxModelLen: maxLen, reasoningParser: parser };
}

/** serving_models.py show_available_models: one card per served name, root = the model path. */
function modelList(args: ServeArgs, control: NodeControl, maxLen: number): unknown {
  const len = control.failure === 'wrong-max-len' ? maxLen / 2 : maxLen;
  const created = Math.floor(Date.now() / 1000);
  const permission = {
    id: `modelperm-sim${created}`, object: 'model_permission', created, allow_create_engine: false, allow_sampling: true,
    allow_logprobs: true, allow_search_indices: false, allow_view: true, allow_fine_tuning: false, organization: '*', group: null, is_blocking: false,
  };
  return {
    object: 'list',
    data: servedNames(args, control).map((id) => ({ id, object: 'model', created, owned_by: 'vllm', root: args.model, parent: null, max_model_len: len, permission: [permission] })),
  };
}

const parsed = parseServe(process.argv.slice(2));
parsed.id = containerId(parsed.id);
await startUp(parsed, startControl);
