/**
 * `status` for a set of nodes: every node is asked in parallel with one read-only script, so one slow or
 * unreachable node neither blocks nor fails the others. The protected-node limits are decided here, before
 * anything is sent: no HTTP request and no GPU probe on a protected node without --yes.
 */
import { PulseError } from '../errors.js';
import { failureOf } from '../node/outcome.js';
import { probeHost } from '../steps/inputs.js';
import { readNodeStateSync } from '../state/state.js';
import { nodeOf, targetOf, type NodesConfig, type NodeConfig } from '../config/nodes.js';
import type { NodeSession, NodeTarget, RemoteResult } from '../node/types.js';
import type { NodeLock, NodeState } from '../model/index.js';
import { nodeLock } from '../steps/lock.js';
import { tunnelStatusOf } from '../gateway/tunnel/health.js';
import { containerOf, envOf, gpuProcessesOf, healthOf, kvCacheOf, lastOf, memoryOf, recordsOf } from './parse.js';
import { STATUS_JSON_VERSION, type GpuProbeStatus, type NodeStatus, type StatusReport } from './types.js';
import { runGpuProbe } from './probe.js';
import { verdictOf } from './verdict.js';
import { readEndpoints } from './endpoint.js';

/** A node whose script has not finished by then is shown as not answering (its process group is killed). */
export const DEFAULT_NODE_TIMEOUT_MS = 45_000;
/** The ssh handshake must be done by then: a node that accepts but never talks must not hold up the table. */
export const CONNECT_TIMEOUT_MS = 15_000;

/** Where one node's status run is: opening its session, running status.sh (and the lock read), or finished. */
export type NodePhase = 'connect' | 'script' | 'done';

export interface StatusRequest {
  node: string | undefined;
  http: boolean;
  gpuProbe: boolean;
  yes: boolean;
  /** GET /health as well as /v1/models (default true; only where HTTP is allowed at all): vLLM answers /v1/models with a dead engine. */
  healthRoute?: boolean;
}

export interface StatusDeps {
  open: (target: NodeTarget) => Promise<NodeSession>;
  stateDir: string;
  /** A node that has not answered within this time is reported unreachable (ms). */
  nodeTimeoutMs?: number;
  /** Sees each node's raw run (for --verbose: the raw @pulse records). */
  onResult?: (result: RemoteResult) => void;
  /** Sees each node move to the next phase, with the time that phase may take (ms; 0 for done). */
  onPhase?: (node: string, phase: NodePhase, boundMs: number) => void;
}

/**
 * The node names a status run covers; an unknown --node is refused, and --gpu-probe without --yes on a protected node
 * too, also over the fleet (RUNTIME.md: the limits hold "also when status has no --node"; name the node with --node
 * to probe only another one).
 */
export function selectNodes(config: NodesConfig, req: StatusRequest): string[] {
  if (req.node === undefined) {
    const prot = Object.entries(config.nodes).filter(([, n]) => n.protected).map(([name]) => name);
    if (req.gpuProbe && !req.yes && prot.length > 0) {
      throw new PulseError('refused', `status --gpu-probe starts a GPU container on every node, and ${prot.join(', ')} ${prot.length === 1 ? 'is' : 'are'} protected: add --yes`, {
        hint: 'or name the node with --node to probe only another node',
      });
    }
    return Object.keys(config.nodes);
  }
  const node = nodeOf(config, req.node);
  if (req.gpuProbe && node.protected && !req.yes) {
    throw new PulseError('refused', `${req.node} is protected: status --gpu-probe starts a GPU container there and needs --yes`);
  }
  return [req.node];
}

/** Why no HTTP request goes to this node's server, or null when status may send one. */
export function httpSkipReason(node: NodeConfig, req: StatusRequest): string | null {
  if (!req.http) return 'not checked: --no-http';
  if (node.protected && !req.yes) return 'not checked: protected node, no HTTP request without --yes';
  return null;
}

/** The exported inputs of status.sh for one node. */
export function statusInputs(node: NodeConfig, http: boolean, healthRoute = true): Record<string, string> {
  return {
    PULSE_HEALTH_ROUTE: http && healthRoute ? '1' : '0',
    PULSE_RECIPES: Object.entries(node.recipes).map(([n, r]) => `${n}\t${r.dir}\t${r.container}`).join('\n'),
    PULSE_PORT: node.env.PORT,
    PULSE_PROBE_HOST: probeHost(node.env.BIND),
    PULSE_HTTP: http ? '1' : '0',
  };
}

function emptyStatus(name: string, node: NodeConfig, state: NodeState | null, httpSkip: string | null): NodeStatus {
  return {
    node: name, protected: node.protected, answered: false, error: null, recipe: null, container: null, containers: [], dockerDown: null,
    env: null, health: healthOf(undefined, httpSkip ?? 'not checked: the node did not answer', ''),
    kvCache: { line: null, source: null, tokens: null, concurrency: null, concurrencyForTokens: null }, memory: null, gpuProcesses: null,
    lastDeploy: state ? { state: state.state, action: state.action, profile: state.profile, at: state.at, error: state.error } : null,
    lastKnownGood: state?.lastKnownGood ?? null,
    watchdog: state?.watchdog ?? null,
    deploy: null, lock: null, gpuProbe: null, endpoint: null, tunnel: null, verdict: 'unreachable', healthy: false, warnings: [],
  };
}

/** Fill a NodeStatus from a finished status.sh run. */
export function applyRecords(s: NodeStatus, result: RemoteResult, gateGiB: number, state: NodeState | null, httpSkip: string | null): void {
  const recs = result.records;
  s.recipe = (lastOf(recs, 'primary')?.['recipe'] as string | undefined) ?? null;
  s.containers = recordsOf(recs, 'container').map(containerOf);
  const primary = lastOf(recs, 'container', s.recipe ?? undefined);
  s.container = primary ? containerOf(primary) : null;
  const env = lastOf(recs, 'env', s.recipe ?? undefined);
  s.env = env ? envOf(env) : null;
  s.health = healthOf(lastOf(recs, 'health'), httpSkip, state?.servedModelName ?? 'qwen38');
  s.kvCache = kvCacheOf(lastOf(recs, 'kv-cache'), s.container?.exists ?? false, state);
  s.memory = memoryOf(lastOf(recs, 'memory'), gateGiB, s.container?.running ?? false);
  s.gpuProcesses = gpuProcessesOf(recs);
  if (s.env?.drift) s.warnings.push(`${s.env.path} was edited after pulse rendered it (body does not match pulse-sha256)`);
  if (s.env?.exists && !s.env.renderedByPulse) s.warnings.push(`${s.env.path} has no pulse header (not rendered by pulse)`);
  if (s.memory?.warning) s.warnings.push(s.memory.warning);
  if (s.kvCache.source === 'state') {
    // status.sh reads only the log's last lines (PULSE_KV_TAIL_LINES): a line vLLM printed at start-up is gone from
    // them once the server logged more, or when the log config rotated it out.
    const why = s.container?.logs ? `; log config ${s.container.logs.summary}` : '';
    s.warnings.push(`the KV cache line is not in the container log's last lines (rotated out, or logged before them${why}); showing the value up saved`);
  }
  const c = s.container;
  if (c?.exists && c.state === 'restarting') {
    s.warnings.push(
      `${c.name} is restarting: its restart policy restarted it ${c.restartCount ?? '?'} time(s), last ${c.exitMeaning ?? `exit ${c.exitCode ?? '?'}`}; ` +
        `it loops until stopped: pulse model down --node ${s.node} (or docker update --restart=no ${c.name} to keep it with its log)`,
    );
  }
  if (c?.exists && c.state === 'dead') s.warnings.push(`${c.name} is dead: docker failed to remove it${c.error ? ` (${c.error})` : ''}; docker rm -f ${c.name} retries`);
  if (c?.exists && c.state === 'created' && c.error) s.warnings.push(`${c.name} could not start (docker left it created, never started): ${c.error}`);
  const docker = lastOf(recs, 'docker');
  if (docker) s.warnings.push(String(docker['detail']));
  if (docker?.['daemon'] === false) s.dockerDown = typeof docker['detail'] === 'string' ? docker['detail'] : 'the Docker daemon does not answer';
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(new PulseError('unreachable', `${what}: no answer within ${Math.round(ms / 1000)} s`)), ms);
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

/** Ask one node. Never throws: an unreachable node or a failed script becomes `answered: false` with the reason. */
export async function statusOfNode(config: NodesConfig, name: string, req: StatusRequest, deps: StatusDeps): Promise<NodeStatus> {
  const node = config.nodes[name] as NodeConfig;
  let state: NodeState | null = null;
  let stateProblem: string | null = null;
  try {
    state = readNodeStateSync(deps.stateDir, name);
  } catch (e) {
    stateProblem = (e as Error).message;
  }
  const httpSkip = httpSkipReason(node, req);
  const s = emptyStatus(name, node, state, httpSkip);
  s.tunnel = tunnelStatusOf(name, node.gatewayTunnel?.localPort, deps.stateDir);
  if (stateProblem) s.warnings.push(stateProblem);
  const probeWanted = req.gpuProbe && (!node.protected || req.yes);
  const gate = node.minMemAvailableGiB ?? config.minMemAvailableGiB;
  let session: NodeSession | null = null;
  const timeout = deps.nodeTimeoutMs ?? DEFAULT_NODE_TIMEOUT_MS;
  const connectMs = Math.min(timeout, CONNECT_TIMEOUT_MS);
  deps.onPhase?.(name, 'connect', connectMs);
  const opening = deps.open(targetOf(name, node));
  try {
    session = await withTimeout(opening, connectMs, `${name}: connect`);
    deps.onPhase?.(name, 'script', timeout);
    // The abort kills the script's process group on the node, not only the channel.
    const signal = AbortSignal.timeout(timeout);
    const result = await session.run('status', { env: statusInputs(node, httpSkip === null, req.healthRoute ?? true), signal });
    deps.onResult?.(result);
    const failure = failureOf(result);
    if (failure) throw failure;
    s.answered = true;
    applyRecords(s, result, gate, state, httpSkip);
    s.lock = await lockOfNode(session, node, s.recipe, timeout).catch((e: unknown) => {
      s.warnings.push(`the node lock could not be read: ${errorLine(name, e, timeout)}`);
      return null;
    });
    if (probeWanted) s.gpuProbe = await runGpuProbe(session, node).catch((e: unknown) => skippedProbe(errorLine(name, e, timeout)));
  } catch (e) {
    s.error = errorLine(name, e, timeout);
    // A connection that arrives after the timeout must still be closed.
    if (!session) void opening.then((late) => late.close()).catch(() => undefined);
  } finally {
    await session?.close().catch(() => undefined);
  }
  if (req.gpuProbe && !probeWanted) s.gpuProbe = skippedProbe('protected node: the GPU probe needs --yes');
  deps.onPhase?.(name, 'done', 0);
  return s;
}

/** The deploy lock of the node's primary recipe (lock.sh show: read-only, the node's clock judges the lease). */
async function lockOfNode(session: NodeSession, node: NodeConfig, recipe: string | null, timeoutMs: number): Promise<NodeLock | null> {
  const dir = (recipe && Object.hasOwn(node.recipes, recipe) ? node.recipes[recipe] : Object.values(node.recipes)[0])?.dir;
  if (!dir) return null;
  return nodeLock(session, 'show', dir, null, { signal: AbortSignal.timeout(timeoutMs) });
}

function errorLine(name: string, e: unknown, timeoutMs: number): string {
  if (e instanceof PulseError) return e.kind === 'unreachable' ? `unreachable: ${e.message}` : e.message;
  if ((e as Error)?.name === 'TimeoutError') return `${name}: no answer within ${Math.round(timeoutMs / 1000)} s`;
  return `${name}: ${(e as Error)?.message ?? String(e)}`;
}

function skippedProbe(why: string): GpuProbeStatus {
  return { ran: false, skipped: why, exitCode: null, output: null };
}

/** Status of every selected node, in nodes.json order, asked in parallel. */
export async function collectStatus(config: NodesConfig, req: StatusRequest, deps: StatusDeps): Promise<StatusReport> {
  const names = selectNodes(config, req);
  const nodes = await Promise.all(names.map((n) => statusOfNode(config, n, req, deps)));
  const notes: string[] = [];
  const gateway = readEndpoints(deps.stateDir);
  for (const n of nodes) n.endpoint = gateway.endpoints.get(n.node) ?? null;
  if (gateway.note) notes.push(gateway.note);
  return judged({ version: STATUS_JSON_VERSION, allAnswered: nodes.every((n) => n.answered), allHealthy: false, nodes, notes });
}

/** Sets each node's health word and the report's allHealthy (again after the deploys in progress are known). */
export function judged(report: StatusReport): StatusReport {
  for (const n of report.nodes) Object.assign(n, verdictOf(n));
  report.allHealthy = report.nodes.every((n) => n.healthy);
  return report;
}
