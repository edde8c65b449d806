/**
 * Prometheus metrics of `pulse worker`, on ONE scrape address (`--metrics HOST:PORT`, PULSE_METRICS_ADDRESS; off by
 * default): GET /metrics answers pulse's own metrics (prom-client) followed by the Temporal SDK's worker metrics
 * (temporal_*), which the SDK's exporter serves on a private loopback port that this server reads on each scrape.
 * One target to scrape, one port to open, and the SDK's exporter never faces the network.
 *
 * pulse's metrics are recorded in the activity layer (the worker is where steps are observed; workflow code must
 * stay deterministic), by wrapping each activity:
 * - pulse_step_duration_seconds{step}: every attempt of every step, successful or not;
 * - pulse_readiness_wait_seconds: a readiness wait that ended ready, from its FIRST attempt (the wait's checkpoint
 *   survives a worker crash, so a resumed wait is measured whole);
 * - pulse_drain_requests_total{outcome} and pulse_drain_wait_seconds: each drain before a stop, what it let finish
 *   (drained), and what each stop cut (cut: the requests in flight right before its signal), and how long it waited;
 * - pulse_deploys_total{action,result}: result ok when the final state is published (up, down), failed when the
 *   compensation marks the node failed, preflight_failed when preflight refuses; a deploy that fails before its
 *   stop step any other way is only in Temporal's own temporal_workflow_failed counter.
 */
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { Server } from 'node:http';
import { Context } from '@temporalio/activity';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PulseActivities } from '../activities/contract.js';
import type { DrainResult, StopResult, WatchdogOutcome } from '../runtime/model/index.js';
import { PulseError } from '../runtime/errors.js';

/** The step label of each activity (the names the CLI and RUNTIME.md use). */
const STEP_OF: Record<keyof PulseActivities, string> = {
  checkPlan: 'check',
  acquireNodeLock: 'lock',
  releaseNodeLock: 'unlock',
  runPreflight: 'preflight',
  makeDirs: 'mkdir',
  drainServer: 'drain',
  stopServer: 'stop',
  waitForMemory: 'memory',
  writeEnv: 'write-env',
  startServer: 'start',
  pollReadiness: 'readiness',
  verifyServer: 'verify',
  publishState: 'publish',
  markFailed: 'compensate',
  readFailedStart: 'failed-start',
  planRollback: 'backup',
  watchdogProbe: 'watchdog-check',
  watchdogRecord: 'watchdog-record',
};

/** pulse's own metrics in their own registry (no prom-client globals: tests build several). */
export class PulseMetrics {
  readonly registry = new Registry();
  readonly deploys = new Counter({
    name: 'pulse_deploys_total',
    help: 'Deploys that ended, by action (up/down) and result (ok, failed, preflight_failed)',
    labelNames: ['action', 'result'] as const,
    registers: [this.registry],
  });
  readonly stepDuration = new Histogram({
    name: 'pulse_step_duration_seconds',
    help: 'Duration of one attempt of a deploy step on this worker',
    labelNames: ['step'] as const,
    buckets: [0.1, 0.5, 1, 2, 5, 15, 30, 60, 300, 900, 1800, 3600],
    registers: [this.registry],
  });
  readonly readinessWait = new Histogram({
    name: 'pulse_readiness_wait_seconds',
    help: 'Time from the first readiness probe of a deploy until /v1/models answered 200',
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600],
    registers: [this.registry],
  });
  readonly drainRequests = new Counter({
    name: 'pulse_drain_requests_total',
    help: 'Requests of a stop, by outcome: drained (in flight when the drain before it began, finished before the stop) or cut (in flight right before the stop signal)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly drainWait = new Histogram({
    name: 'pulse_drain_wait_seconds',
    help: 'Time a drain before a stop waited for the requests in flight (over all its attempts)',
    buckets: [0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [this.registry],
  });
  readonly watchdogVerdict = new Gauge({
    name: 'pulse_watchdog_verdict',
    help: 'The watchdog\'s judged verdict per node: 1 for the current one (ok or down), 0 for the other (on the worker that records it: the gateway host)',
    labelNames: ['node', 'verdict'] as const,
    registers: [this.registry],
  });
  readonly watchdogStreak = new Gauge({
    name: 'pulse_watchdog_streak',
    help: 'Checks in a row with the current verdict, per node',
    labelNames: ['node'] as const,
    registers: [this.registry],
  });
  readonly watchdogHeals = new Counter({
    name: 'pulse_watchdog_heals_total',
    help: 'Heals the watchdog started (a rollback to last known good), per node',
    labelNames: ['node'] as const,
    registers: [this.registry],
  });
  readonly watchdogStopped = new Gauge({
    name: 'pulse_watchdog_healing_stopped',
    help: '1 while the heal budget of the node is spent (healing stopped, node marked failed), else 0',
    labelNames: ['node'] as const,
    registers: [this.registry],
  });
}

/** The watchdog's record after one run (activities/watchdog.ts watchdogRecord). */
function observeWatchdog(m: PulseMetrics, o: WatchdogOutcome): void {
  const r = o.record;
  if (!r || r.judged === null) return;
  for (const v of ['ok', 'down'] as const) m.watchdogVerdict.set({ node: o.node, verdict: v }, r.judged === v ? 1 : 0);
  m.watchdogStreak.set({ node: o.node }, r.streak);
  m.watchdogStopped.set({ node: o.node }, r.gaveUp ? 1 : 0);
  if (o.heal) m.watchdogHeals.inc({ node: o.node });
}

/** A drain's counts: what it let finish, and how long it waited (what the stop cuts, the stop itself counts). */
function observeDrain(m: PulseMetrics, r: DrainResult): void {
  if (r.skipped) return;
  m.drainRequests.inc({ outcome: 'drained' }, r.drained);
  m.drainWait.observe(r.waitedS);
}

/** Where the wait's clock stood when this attempt began: `now` minus what earlier attempts measured (activities/wait-loop.ts). */
function firstAttemptStartMs(now: number): number {
  const d = Context.current().info.heartbeatDetails as { elapsedMs?: unknown } | undefined;
  return typeof d?.elapsedMs === 'number' && d.elapsedMs >= 0 ? now - d.elapsedMs : now;
}

function observeOutcome(m: PulseMetrics, name: keyof PulseActivities, input: unknown, result: unknown, startMs: number): void {
  if (name === 'watchdogRecord') observeWatchdog(m, result as WatchdogOutcome);
  if (name === 'pollReadiness') m.readinessWait.observe((Date.now() - startMs) / 1000);
  if (name === 'drainServer') observeDrain(m, result as DrainResult);
  // What a stop cut: the requests in flight right before its signal (the drain's last sample may be older).
  if (name === 'stopServer') m.drainRequests.inc({ outcome: 'cut' }, (result as StopResult).atSignal ?? 0);
  if (name === 'runPreflight' && (result as { ok?: boolean }).ok === false) m.deploys.inc({ action: 'up', result: 'preflight_failed' });
  const s = input as { state?: string; action?: string };
  if (name === 'markFailed') m.deploys.inc({ action: s.action ?? 'unknown', result: 'failed' });
  if (name === 'publishState' && (s.state === 'up' || s.state === 'down')) m.deploys.inc({ action: s.action ?? s.state, result: 'ok' });
}

/** The same activities, each timed and counted into `m` (fakes too: tests see what production records). */
export function instrumentActivities(acts: PulseActivities, m: PulseMetrics): PulseActivities {
  const out: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(acts) as [keyof PulseActivities, (...args: unknown[]) => Promise<unknown>][]) {
    const step = STEP_OF[name] ?? name;
    // Every argument goes through: node steps get a second one (LockUse) on a locked deploy.
    out[name] = async (...args: never[]) => {
      const input: unknown = args[0];
      const t0 = Date.now();
      const waitStart = name === 'pollReadiness' ? firstAttemptStartMs(t0) : t0;
      try {
        const result = await fn(...args);
        observeOutcome(m, name, input, result, waitStart);
        return result;
      } finally {
        m.stepDuration.observe({ step }, (Date.now() - t0) / 1000);
      }
    };
  }
  return out as unknown as PulseActivities;
}

/** host and port of `HOST:PORT` (`[::1]:9464` for IPv6); throws PulseError('usage') naming the bad value. */
export function parseHostPort(value: string, what = '--metrics'): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new PulseError('usage', `${what} must be HOST:PORT (e.g. 0.0.0.0:9464), got "${value}"`);
  }
  return { host: (m[1] ?? m[2]) as string, port };
}

/** A loopback host:port for the SDK's own exporter (the kernel's free port, released for the SDK to bind). */
export async function privateExporterAddress(): Promise<string> {
  return new Promise((resolve, reject) => {
    const srv = createNetServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => (a && typeof a === 'object' ? resolve(`127.0.0.1:${a.port}`) : reject(new Error('no free port'))));
    });
  });
}

export interface MetricsServer {
  /** host:port actually bound (the port is the kernel's when 0 was asked). */
  address: string;
  close(): Promise<void>;
}

async function temporalText(address: string | null): Promise<string> {
  if (!address) return '';
  try {
    const res = await fetch(`http://${address}/metrics`, { signal: AbortSignal.timeout(5000) });
    return await res.text();
  } catch (err) {
    return `# temporal worker metrics unavailable: ${err instanceof Error ? err.message : String(err)}\n`;
  }
}

/**
 * Serve GET /metrics on `address`: pulse's registry, then the text of the SDK exporter at `temporalAddress`
 * (loopback host:port given to Runtime.install, or null when the SDK exports none).
 */
export async function startMetricsServer(address: string, m: PulseMetrics, temporalAddress: string | null): Promise<MetricsServer> {
  const { host, port } = parseHostPort(address);
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || !(req.url ?? '').startsWith('/metrics')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('pulse worker metrics: GET /metrics\n');
      return;
    }
    Promise.all([m.registry.metrics(), temporalText(temporalAddress)]).then(
      ([own, temporal]) => res.writeHead(200, { 'content-type': m.registry.contentType }).end(`${own}\n${temporal}`),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err instanceof Error ? err.message : String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new PulseError('usage', `cannot serve metrics on ${address}: ${err.message}`, { cause: err })));
    server.listen(port, host, () => resolve());
  });
  const bound = server.address();
  const actual = bound && typeof bound === 'object' ? `${host.includes(':') ? `[${host}]` : host}:${bound.port}` : address;
  return {
    address: actual,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
