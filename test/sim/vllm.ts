/**
 * The simulated vLLM server: the process a simulated container runs for `vllm serve MODEL ...`. An
 * OpenAI-compatible HTTP server (GET /v1/models, POST /v1/chat/completions, GET /health) that enforces the bearer
 * key of --api-key on /v1, becomes ready after the node's ready delay, logs vLLM-like lines, fails on request
 * (the node's control file), and records every request it receives in SIM_STATE/requests.jsonl.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { appendJsonLine, readControl } from './control.js';
import type { NodeControl } from './control.js';
import { ContainerLog, kvCacheTokens, proofLines } from './vllm-log.js';

interface ServeArgs {
  id: string;
  model: string;
  flags: Record<string, string>;
}

/** Parses `--sim-id=ID serve MODEL --flag value ...` (flags without a value become "true"). */
export function parseServe(argv: string[]): ServeArgs {
  const id = (argv.find((a) => a.startsWith('--sim-id=')) ?? '').slice(9);
  const rest = argv.filter((a) => !a.startsWith('--sim-id='));
  if (rest[0] !== 'serve' || !rest[1]) throw new Error(`vllm: expected "serve MODEL", got: ${rest.join(' ')}`);
  const flags: Record<string, string> = {};
  for (let i = 2; i < rest.length; i++) {
    const a = rest[i]!;
    if (!a.startsWith('--')) continue;
    const eq = a.indexOf('=');
    if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
    else if (rest[i + 1] !== undefined && !rest[i + 1]!.startsWith('--')) flags[a.slice(2)] = rest[++i]!;
    else flags[a.slice(2)] = 'true';
  }
  return { id, model: rest[1], flags };
}

const containerDir = process.env.SIM_CONTAINER_DIR ?? '.';
const stateDir = process.env.SIM_STATE ?? '.';
const log = new ContainerLog(containerDir);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function mountTargets(): string[] {
  try {
    const rec = JSON.parse(fs.readFileSync(path.join(containerDir, 'config.json'), 'utf8')) as { Mounts: { Destination: string }[] };
    return rec.Mounts.map((m) => m.Destination);
  } catch {
    return [];
  }
}

/** Exit code and time for `docker inspect` (the record is corrected from this when the process is gone). */
process.on('exit', (code) => {
  fs.writeFileSync(path.join(containerDir, 'exit.json'), JSON.stringify({ code, at: new Date().toISOString().replace(/Z$/, '000000Z') }));
});
process.on('SIGTERM', () => {
  log.info('launcher.py:80', 'Shutting down FastAPI HTTP server.');
  process.exit(0);
});

function logLoaded(args: ServeArgs, maxLen: number): void {
  const util = Number(args.flags['gpu-memory-utilization'] ?? 0.9);
  const tokens = kvCacheTokens(util, args.flags['kv-cache-dtype'] ?? 'auto');
  log.info('default_loader.py:262', 'Loading weights took 41.27 seconds');
  for (const line of proofLines(process.env, mountTargets())) log.info('qwen3_next_mtp.py:118', line);
  log.info('kv_cache_utils.py:1087', `GPU KV cache size: ${tokens.toLocaleString('en-US')} tokens`);
  log.info('kv_cache_utils.py:1091', `Maximum concurrency for ${maxLen.toLocaleString('en-US')} tokens per request: ${(tokens / maxLen).toFixed(2)}x`);
}

async function startUp(args: ServeArgs, control: NodeControl): Promise<void> {
  const maxLen = Number(args.flags['max-model-len'] ?? 262144);
  log.info('api_server.py:1896', 'vLLM API server version 0.11.1.dev42+sim');
  log.info('utils.py:326', `non-default args: {'model': '${args.model}', 'served_model_name': ['${args.flags['served-model-name'] ?? args.model}'], 'max_model_len': ${maxLen}}`);
  if (control.failure === 'crash-at-start') {
    await sleep(Math.min(200, control.readyDelayMs));
    log.info('core.py:700', 'EngineCore failed to start.', 'ERROR');
    log.write('stderr', 'RuntimeError: CUDA error: out of memory (simulated crash at start)');
    process.exit(1);
  }
  await sleep(control.readyDelayMs / 2);
  if (control.failure === 'die-during-readiness') {
    log.write('stderr', 'RuntimeError: Engine core initialization failed (simulated death during readiness)');
    process.exit(1);
  }
  logLoaded(args, maxLen);
  await sleep(control.readyDelayMs / 2);
  if (control.failure === 'never-ready') {
    log.info('backends.py:39', 'Compiling a graph for dynamic shape takes 12.1 s (simulated: never ready)');
    setInterval(() => undefined, 1 << 30); // stays alive, never listens
    return;
  }
  serve(args, control, maxLen);
}

function serve(args: ServeArgs, control: NodeControl, maxLen: number): void {
  const server = http.createServer((req, res) => void handle(req, res, args, control, maxLen));
  server.on('error', (err) => {
    log.write('stderr', `OSError: [Errno 98] error while attempting to bind: ${err.message}`);
    process.exit(1);
  });
  server.listen(Number(args.flags.port ?? 8000), args.flags.host ?? '0.0.0.0', () => {
    log.write('stderr', `INFO:     Started server process [${process.pid}]`);
    log.write('stderr', 'INFO:     Waiting for application startup.');
    log.write('stderr', 'INFO:     Application startup complete.');
  });
}

function reply(res: http.ServerResponse, status: number, body: unknown): number {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
  return status;
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, args: ServeArgs, control: NodeControl, maxLen: number): Promise<void> {
  const body = await readBody(req);
  const url = (req.url ?? '/').split('?')[0]!;
  const key = args.flags['api-key'];
  const authorized = !key || req.headers.authorization === `Bearer ${key}`;
  if (control.failure === 'slow') await sleep(control.slowMs);
  let status: number;
  let model: string | undefined;
  if (url.startsWith('/v1') && !authorized) status = reply(res, 401, { error: 'Unauthorized' });
  else if (req.method === 'GET' && url === '/health') status = reply(res, 200, {});
  else if (req.method === 'GET' && url === '/v1/models') status = reply(res, 200, modelList(args, control, maxLen));
  else if (req.method === 'POST' && url === '/v1/chat/completions') [status, model] = chat(res, body, servedName(args, control));
  else status = reply(res, 404, { detail: 'Not Found' });
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

function servedName(args: ServeArgs, control: NodeControl): string {
  return control.failure === 'wrong-model' ? args.model : (args.flags['served-model-name'] ?? args.model);
}

function modelList(args: ServeArgs, control: NodeControl, maxLen: number): unknown {
  const len = control.failure === 'wrong-max-len' ? maxLen / 2 : maxLen;
  const id = servedName(args, control);
  const created = Math.floor(Date.now() / 1000);
  return { object: 'list', data: [{ id, object: 'model', created, owned_by: 'vllm', root: args.model, parent: null, max_model_len: len, permission: [] }] };
}

function chat(res: http.ServerResponse, body: string, served: string): [number, string | undefined] {
  let req: { model?: string; messages?: { content?: unknown }[] };
  try {
    req = JSON.parse(body) as typeof req;
  } catch {
    return [reply(res, 400, { object: 'error', message: 'invalid JSON body', type: 'BadRequestError', code: 400 }), undefined];
  }
  if (req.model !== served) {
    return [reply(res, 404, { object: 'error', message: `The model \`${req.model}\` does not exist.`, type: 'NotFoundError', code: 404 }), req.model];
  }
  const promptTokens = Math.max(1, Math.ceil(JSON.stringify(req.messages ?? []).length / 4));
  const out = {
    id: `chatcmpl-sim${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: served,
    choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: promptTokens, completion_tokens: 2, total_tokens: promptTokens + 2 },
  };
  return [reply(res, 200, out), req.model];
}

const parsed = parseServe(process.argv.slice(2));
await startUp(parsed, readControl(stateDir));
