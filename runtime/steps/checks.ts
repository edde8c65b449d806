/** The read-only probes after the start: one readiness probe, and the verify of what actually runs. */
import type { ReadinessProbe, ReadinessSeen, UpPlan, VerifyResult } from '../model/index.js';
import { PulseError } from '../errors.js';
import type { NodeSession, RemoteResult } from '../node/types.js';
import { SCRIPT_EXIT } from '../node/types.js';
import { failureOf } from '../node/outcome.js';
import { readinessInputs, verifyInputs } from './inputs.js';
import { kvCacheSummary } from './kv-cache.js';
import { readServerLog } from '../vllm/phase.js';
import { lastRecord, num, recordsOf, runStep, str, bool } from './run.js';
import type { StepOptions } from './run.js';

/** What to do about a 401 (readiness or verify). */
const KEY_HINT = 'vLLM takes its key from --api-key (start.sh passes the node .env API_KEY), else from VLLM_API_KEY in the container; put that key in the node .env as API_KEY';

function withKeyHint(err: unknown): unknown {
  return err instanceof PulseError && err.kind === 'unauthorized' && !err.hint ? new PulseError(err.kind, err.message, { hint: KEY_HINT, cause: err }) : err;
}

/**
 * One GET /v1/models on the node, with the key from the node .env; exit 13 means "not yet", not a failure. A 401
 * (exit 14) fails as `unauthorized`: the server wants a key the node .env does not give, and waiting cannot fix it.
 */
export async function probeReadiness(session: NodeSession, plan: UpPlan, opts?: StepOptions, seen?: ReadinessSeen | null, noLogTail = false): Promise<ReadinessProbe> {
  // The container the wait saw first: a probe fails fast when it was replaced or its restart policy restarted it.
  const first: Record<string, string> = seen ? { PULSE_SEEN_ID: seen.containerId, PULSE_SEEN_RESTARTS: String(seen.restartCount) } : {};
  // A wait that follows the log has the phase from the stream: the probe skips the tail.
  const noTail: Record<string, string> = noLogTail ? { PULSE_NO_LOG_TAIL: '1' } : {};
  const result = await runStep(session, 'readiness', { ...readinessInputs(plan), ...first, ...noTail }, opts, [SCRIPT_EXIT.notReady, SCRIPT_EXIT.precondition]).catch((e: unknown) => {
    throw withKeyHint(e);
  });
  if (result.exitCode === SCRIPT_EXIT.precondition) throw diedOrMissing(result);
  const r = lastRecord(result, 'readiness');
  const c = lastRecord(result, 'container');
  const id = str(c, 'id');
  const restarts = num(c, 'restartCount');
  const container = id && restarts !== null ? { containerId: id, restartCount: restarts } : null;
  const tail = lastRecord(result, 'log-tail');
  const log = tail ? readServerLog(str(tail, 'text')) : null;
  return {
    ready: result.exitCode === 0 && bool(r, 'ready'), httpStatus: num(r, 'httpStatus'), detail: str(r, 'detail') ?? 'no answer', container,
    ...(log ? { phase: log.phase, lastLine: log.lastLine } : {}),
  };
}

/**
 * A readiness probe the script refused: with a container record, the server this deploy started exited, died, was
 * replaced or restarted before it served. That is "not ready", for good (no retry of the wait can change it), not a
 * precondition of the node; without one (no curl on the node) it is the precondition the script says.
 */
function diedOrMissing(result: RemoteResult): PulseError {
  const err = failureOf(result) ?? new PulseError('precondition', `${result.node}: step readiness failed`);
  // A container docker left `created` with State.Error set (its start failed: a mount, the image, the GPU hook) is the
  // node's precondition, not the server. One still `created` without an error is only between docker run's create and
  // its start (a loaded node shows it): its other verdicts (replaced) are the server's, as for a running one.
  const c = lastRecord(result, 'container');
  if (!c || (str(c, 'status') === 'created' && (str(c, 'error') ?? '') !== '')) return err;
  const why = [...result.records].reverse().find((r) => r.kind === 'error' && typeof r.message === 'string')?.message as string | undefined;
  return new PulseError('not-ready', `${result.node}: the server will not become ready: ${why ?? 'its container ended'}`, { final: true });
}

interface ModelsAnswer {
  ids: string[];
  maxModelLen: number | null;
}

/** Parse a /v1/models body (sent back base64, so the script needs no JSON tool). Never throws. */
export function parseModels(b64: string | null, served: string): ModelsAnswer {
  try {
    const body = JSON.parse(Buffer.from(b64 ?? '', 'base64').toString('utf8')) as { data?: unknown };
    const data = Array.isArray(body.data) ? (body.data as Record<string, unknown>[]) : [];
    const ids = data.map((m) => (typeof m?.id === 'string' ? m.id : '')).filter((id) => id !== '');
    const mine = data.find((m) => m?.id === served) ?? data[0];
    const len = mine?.max_model_len;
    return { ids, maxModelLen: typeof len === 'number' ? len : null };
  } catch {
    return { ids: [], maxModelLen: null };
  }
}

/**
 * The port proof of verify.sh: a socket on the port that is not the container's is a problem (vLLM binds with
 * SO_REUSEPORT, so a stray server of the same user shares the port and may have answered readiness and verify); a
 * proof that could not be made (docker exec failed and the holder is not visible) is a warning that says so.
 */
function portVerdict(result: RemoteResult, plan: UpPlan): { problem?: string; warning?: string } {
  const others = recordsOf(result, 'port-listener').filter((r) => str(r, 'owner') === 'other');
  const port = lastRecord(result, 'port');
  const container = plan.recipe.container;
  if (others.length > 0) {
    const who = others.map((r) => `${str(r, 'address') ?? '?'} (socket ${str(r, 'inode') ?? '?'}, uid ${num(r, 'uid') ?? '?'}) held by ${str(r, 'holders') ?? 'no process pulse can see'}`);
    return {
      problem:
        `port ${plan.expect.port} is shared with a server that is not container ${container}: ${who.join('; ')}; ` +
        'vLLM binds its port with SO_REUSEPORT, so the kernel hands each connection to either, and readiness and verify may have been answered by it: stop it, then run up again',
    };
  }
  if (port && !bool(port, 'proven')) return { warning: `pulse could not prove that container ${container} is the server on port ${plan.expect.port}: ${str(port, 'detail') ?? 'no detail'}` };
  return {};
}

/** Check served model name, max_model_len, the KV cache line and each pulse-proof (missing proof = warning). */
export async function verifyServer(session: NodeSession, plan: UpPlan, logPath: string | null, opts?: StepOptions): Promise<VerifyResult> {
  const result = await runStep(session, 'verify', verifyInputs(plan, logPath), opts);
  const modelsRec = lastRecord(result, 'models');
  if (num(modelsRec, 'httpStatus') === 401) {
    throw new PulseError('unauthorized', `${plan.node}: step verify: GET /v1/models: 401 Unauthorized: the server wants a key that the node .env does not give`, { hint: KEY_HINT });
  }
  const models = parseModels(str(modelsRec, 'body_b64'), plan.expect.servedModelName);
  const kvCacheLine = kvCacheSummary([str(lastRecord(result, 'kv-cache'), 'line'), str(lastRecord(result, 'kv-concurrency'), 'line')]);
  const proofs = recordsOf(result, 'proof').map((r) => ({ text: str(r, 'text') ?? '', found: bool(r, 'found') }));
  const problems: string[] = [];
  const warnings: string[] = [];
  const served = models.ids.includes(plan.expect.servedModelName) ? plan.expect.servedModelName : (models.ids[0] ?? null);
  if (served !== plan.expect.servedModelName) {
    problems.push(`served model is ${served ?? 'missing'}, expected ${plan.expect.servedModelName}`);
  }
  if (plan.expect.maxModelLen !== null && models.maxModelLen !== plan.expect.maxModelLen) {
    problems.push(`max_model_len is ${models.maxModelLen ?? 'missing'}, expected ${plan.expect.maxModelLen}`);
  }
  // The engine must live: a dead engine core answers /health 503 while /v1/models still answers (verify.sh).
  const health = num(lastRecord(result, 'engine'), 'healthStatus');
  if (health !== 200) problems.push(`engine not healthy: GET /health ${health === null || health === 0 ? 'did not answer' : `answered ${health}`}`);
  if (num(lastRecord(result, 'auth'), 'unauthenticatedStatus') === 200) {
    problems.push('the server answers an unauthenticated GET /v1/models with 200 although the old .env had an API_KEY: the key was lost');
  }
  const port = portVerdict(result, plan);
  if (port.problem) problems.push(port.problem);
  if (port.warning) warnings.push(port.warning);
  if (kvCacheLine === null) warnings.push('no KV cache line in the container log');
  for (const p of proofs) if (!p.found) warnings.push(`pulse-proof not found in the container log: ${p.text}`);
  return { ok: problems.length === 0, servedModelName: served, maxModelLen: models.maxModelLen, kvCacheLine, proofs, problems, warnings };
}
