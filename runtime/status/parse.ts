/**
 * Turns the records of status.sh into the typed pieces of a NodeStatus. Node output is untrusted: every reader
 * tolerates a missing or malformed field and yields null rather than throwing.
 */
import { envBodySha256, parseEnvHeader } from '../plan/render.js';
import { parseModels } from '../steps/checks.js';
import { kvCacheNumbers, kvCacheSummary } from '../steps/kv-cache.js';
import type { PulseRecord } from '../node/types.js';
import type { NodeState } from '../model/index.js';
import { logConfigOf } from './log-config.js';
import type { ContainerStatus, EnvStatus, GpuProcess, HealthStatus, KvCacheStatus, MemoryStatus } from './types.js';

/** At or above this vm.watermark_scale_factor (kernel default 10) status warns that the gate may be out of reach. */
export const WATERMARK_WARN_FACTOR = 100;
const KIB_PER_GIB = 1024 * 1024;

const str = (r: PulseRecord | undefined, k: string): string | null => (typeof r?.[k] === 'string' ? (r[k] as string) : null);
const num = (r: PulseRecord | undefined, k: string): number | null => (typeof r?.[k] === 'number' ? (r[k] as number) : null);

/** All records of one kind, in order. */
export function recordsOf(records: PulseRecord[], kind: string): PulseRecord[] {
  return records.filter((r) => r.kind === kind);
}

/** The last record of one kind (optionally for one recipe). */
export function lastOf(records: PulseRecord[], kind: string, recipe?: string): PulseRecord | undefined {
  return recordsOf(records, kind).filter((r) => recipe === undefined || r['recipe'] === recipe).at(-1);
}

/** A `container` record. */
export function containerOf(r: PulseRecord): ContainerStatus {
  return {
    name: str(r, 'name') ?? '',
    exists: r['exists'] === true,
    running: r['running'] === true,
    state: str(r, 'status') ?? 'unknown',
    startedAt: timeOf(str(r, 'startedAt')),
    image: str(r, 'image'),
    exitCode: num(r, 'exitCode'),
    exitMeaning: str(r, 'exitMeaning') || null,
    restartCount: num(r, 'restartCount'),
    finishedAt: timeOf(str(r, 'finishedAt')),
    oomKilled: r['oomKilled'] === true,
    error: jsonStr(str(r, 'error')),
    logs: logConfigOf(str(r, 'logConfig')),
  };
}

/**
 * A time docker reports, or null for its zero time: docker writes 0001-01-01T00:00:00Z as StartedAt of a container
 * that never started (a `created` one whose start failed) and as FinishedAt of one that never ended. It is no time.
 */
export function timeOf(iso: string | null): string | null {
  if (!iso || iso.startsWith('0001-')) return null;
  return Number.isFinite(Date.parse(iso)) ? iso : null;
}

/** A JSON string literal from the node (`{{json .State.Error}}`); null when empty or not one. */
function jsonStr(text: string | null): string | null {
  try {
    const v = JSON.parse(text ?? '') as unknown;
    return typeof v === 'string' && v !== '' ? v : null;
  } catch {
    return null;
  }
}

/** An `env` record: the header identity and drift, computed from the text with secret lines already removed. */
export function envOf(r: PulseRecord): EnvStatus {
  const base = { path: str(r, 'path') ?? '', exists: r['exists'] === true };
  const empty = { renderedByPulse: false, profile: null, node: null, recipe: null, overlay: null, rendered: null, sha256: null, drift: false };
  const b64 = str(r, 'text_b64');
  if (!base.exists || b64 === null) return { ...base, ...empty };
  const text = Buffer.from(b64, 'base64').toString('utf8');
  const h = parseEnvHeader(text);
  if (!h) return { ...base, ...empty };
  // The integrity hash of every line but the header and the carried secret lines (status.sh sent markers for those):
  // a hand-added command, comment or blank line, or a secret line pulse cannot carry, is drift.
  const drift = envBodySha256(text) !== h.sha256;
  return { ...base, renderedByPulse: true, profile: h.profile, node: h.node, recipe: h.recipe, overlay: h.overlay, rendered: h.rendered, sha256: h.sha256, drift };
}

/** The `health` record, or a skipped health with its reason. */
export function healthOf(r: PulseRecord | undefined, skipped: string | null, servedName: string): HealthStatus {
  const nodeSkip = str(r, 'skipped');
  if (skipped !== null || !r || nodeSkip !== null) {
    return { checked: false, skipped: skipped ?? nodeSkip ?? 'no answer', httpStatus: null, ok: false, modelsOk: false, servedModels: [], maxModelLen: null, detail: null };
  }
  const code = num(r, 'httpStatus');
  const models = parseModels(str(r, 'body_b64'), servedName);
  const detail = str(r, 'detail') || (code === 401 ? 'the server wants a key that the node .env does not give (HTTP 401; vLLM reads --api-key, else VLLM_API_KEY)' : null);
  const route = num(r, 'healthRoute');
  // vLLM's /v1/models keeps answering 200 once the engine core died; only /health says so (503).
  const dead = code === 200 && route !== null && route !== 200 ? `GET /health ${route === 0 ? 'answered nothing' : `answered ${route}`}: the engine is not healthy (vLLM still answers /v1/models)` : null;
  const modelsOk = code === 200 && models.ids.length > 0;
  return {
    checked: true, skipped: null, httpStatus: code === 0 ? null : code, ok: modelsOk && (route === null || route === 200), modelsOk,
    servedModels: models.ids, maxModelLen: models.maxModelLen, detail: code === 0 ? (detail ?? 'no answer') : (dead ?? detail),
    ...(route === null ? {} : { healthRoute: route }),
  };
}

/** The KV cache line from the log, else the one `up` saved (only while a container exists: it is about that run). */
export function kvCacheOf(r: PulseRecord | undefined, containerExists: boolean, state: NodeState | null): KvCacheStatus {
  const line = kvCacheSummary([str(r, 'line'), str(r, 'concurrency')]);
  if (line) return { line, source: 'log', ...kvCacheNumbers(line) };
  if (containerExists && state?.kvCacheLine) {
    const saved = kvCacheSummary([state.kvCacheLine]) ?? state.kvCacheLine;
    return { line: saved, source: 'state', ...kvCacheNumbers(saved) };
  }
  return { line: null, source: null, ...kvCacheNumbers(null) };
}

const gib = (kib: number | null): number | null => (kib === null ? null : Math.round((kib / KIB_PER_GIB) * 10) / 10);

/** The `memory` record against the gate, with the watermark warning of RUNTIME.md Known limits. */
export function memoryOf(r: PulseRecord | undefined, gateGiB: number, serverRunning: boolean): MemoryStatus | null {
  if (!r) return null;
  const availableGiB = gib(num(r, 'availableKiB'));
  const factor = num(r, 'watermarkScaleFactor');
  const warnings: string[] = [];
  if (factor !== null && factor >= WATERMARK_WARN_FACTOR) {
    warnings.push(`vm.watermark_scale_factor is ${factor} (default 10): MemAvailable shrinks as it rises, so the ${gateGiB} GiB gate may be unreachable; set minMemAvailableGiB or --min-mem-gib`);
  }
  if (!serverRunning && availableGiB !== null && availableGiB < gateGiB) {
    warnings.push(`MemAvailable ${availableGiB} GiB is below the ${gateGiB} GiB gate with no server running`);
  }
  return {
    availableGiB, totalGiB: gib(num(r, 'totalKiB')), gateGiB,
    atGate: availableGiB === null ? null : availableGiB >= gateGiB,
    watermarkScaleFactor: factor, warning: warnings.length ? warnings.join('; ') : null,
  };
}

/** `gpu-proc` lines (`pid, name, MiB`), or null when nvidia-smi did not answer. */
export function gpuProcessesOf(records: PulseRecord[]): GpuProcess[] | null {
  if (lastOf(records, 'gpu')?.['ok'] !== true) return null;
  return recordsOf(records, 'gpu-proc').map((r) => {
    const [pid, name, mib] = (str(r, 'line') ?? '').split(',').map((s) => s.trim());
    const n = (s: string | undefined): number | null => (s && /^\d+$/.test(s) ? Number(s) : null);
    return { pid: n(pid), name: name ?? '', usedMiB: n(mib) };
  });
}
