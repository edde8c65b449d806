/**
 * Units of worker/logging.ts and worker/metrics.ts: the line formats, the level filter, the one dropped SDK
 * notice, HOST:PORT parsing, and what each activity outcome records (run in a mock activity context).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { PulseActivities } from '../../activities/contract.js';
import { jsonLine, lineLogger, parseLevel, withoutGatewayNotice, workerLogger } from '../../worker/logging.js';
import { instrumentActivities, parseHostPort, PulseMetrics, startMetricsServer } from '../../worker/metrics.js';
import { GATEWAY_TASK_QUEUE, TASK_QUEUE, stateTaskQueue } from '../../workflows/definitions.js';
import { freePort } from '../sim/ports.js';

function sink(isTTY: boolean): { stream: Writable & { isTTY?: boolean }; text(): string } {
  let out = '';
  const stream = new Writable({ write: (c: Buffer, _e, cb) => ((out += c.toString()), cb()) }) as Writable & { isTTY?: boolean };
  stream.isTTY = isTTY;
  return { stream, text: () => out };
}

describe('logging', () => {
  it('JSON when the stream is not a TTY: time, level, msg, metadata; errors as name+message; no task token', () => {
    const s = sink(false);
    const log = lineLogger({ stream: s.stream });
    log.warn('step failed', { workflowId: 'pulse-model-spark2', attempt: 2, error: new TypeError('boom'), taskToken: 'abc' });
    const line = JSON.parse(s.text()) as Record<string, unknown>;
    assert.equal(line['level'], 'WARN');
    assert.equal(line['msg'], 'step failed');
    assert.equal(line['workflowId'], 'pulse-model-spark2');
    assert.deepEqual(line['error'], { name: 'TypeError', message: 'boom' });
    assert.equal(line['taskToken'], undefined);
    assert.ok(!Number.isNaN(Date.parse(String(line['time']))));
  });

  it('plain text on a TTY, with the workflow ID; metadata cannot overwrite msg or level', () => {
    const s = sink(true);
    lineLogger({ stream: s.stream }).info('readiness wait on spark2', { workflowId: 'pulse-model-spark2', activityType: 'pollReadiness' });
    assert.match(s.text(), /^\S+ INFO  readiness wait on spark2 \[workflowId=pulse-model-spark2 activityType=pollReadiness\]\n$/);
    assert.equal(JSON.parse(jsonLine('INFO', 'real', { msg: 'fake', level: 'ERROR' }))['msg'], 'real');
  });

  it('level filter: below the level nothing is written; PULSE_LOG_LEVEL values', () => {
    const s = sink(false);
    const log = lineLogger({ stream: s.stream, level: 'WARN' });
    log.info('hidden');
    log.debug('hidden');
    log.error('shown');
    assert.equal(s.text().trim().split('\n').length, 1);
    assert.equal(parseLevel('debug'), 'DEBUG');
    assert.equal(parseLevel('verbose'), 'INFO');
    assert.equal(parseLevel(undefined, 'WARN'), 'WARN');
  });

  it("drops the SDK's 'No workflows registered' notice for the gateway queue only", () => {
    const s = sink(false);
    const log = withoutGatewayNotice(lineLogger({ stream: s.stream }), GATEWAY_TASK_QUEUE);
    log.warn('No workflows registered, not polling for workflow tasks', { taskQueue: GATEWAY_TASK_QUEUE });
    log.warn('No workflows registered, not polling for workflow tasks', { taskQueue: TASK_QUEUE });
    const lines = s.text().trim().split('\n');
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', /pulse-deploy/);
  });

  it("workerLogger: inside an activity it logs through the activity's context logger; outside, the base logger", async () => {
    const base = sink(false);
    const logger = workerLogger(lineLogger({ stream: base.stream }));
    logger.info('outside');
    assert.equal(JSON.parse(base.text())['msg'], 'outside');
    const seen: Record<string, unknown>[] = [];
    const push = (...args: unknown[]): void => {
      const [m, meta] = typeof args[1] === 'string' ? args.slice(1) : args; // log(level, m, meta) or info(m, meta)
      seen.push({ m, ...(meta as object) });
    };
    const env = new MockActivityEnvironment({}, {
      logger: { log: push, trace: push, debug: push, info: push, warn: push, error: push } as never,
    });
    await env.run(async () => logger.info('inside', { extra: 1 }));
    // The mock context adds only sdkComponent (a real worker adds workflowId etc.: test/metrics/worker-metrics.test.ts).
    const inside = seen.find((e) => e['m'] === 'inside');
    assert.ok(inside?.['sdkComponent'], `through the activity's context logger: ${JSON.stringify(seen)}`);
    assert.equal(inside?.['extra'], 1);
    assert.equal(base.text().includes('inside'), false);
  });
});

describe('metrics', () => {
  it('parseHostPort: host:port and [v6]:port; anything else is a usage error', () => {
    assert.deepEqual(parseHostPort('0.0.0.0:9464'), { host: '0.0.0.0', port: 9464 });
    assert.deepEqual(parseHostPort('[::1]:9464'), { host: '::1', port: 9464 });
    for (const bad of ['9464', 'host:', ':9464', 'a:b', 'h:70000', 'a:1:2']) {
      assert.throws(() => parseHostPort(bad), (e: Error & { kind?: string }) => e.kind === 'usage' && e.message.includes(bad), bad);
    }
  });

  it('stateTaskQueue: pulse-deploy routes state to pulse-gateway; a private queue keeps it', () => {
    assert.equal(stateTaskQueue(TASK_QUEUE), GATEWAY_TASK_QUEUE);
    assert.equal(stateTaskQueue('test-123'), 'test-123');
  });

  const ok = async (): Promise<unknown> => ({ ok: true });
  const fake = (over: Partial<Record<keyof PulseActivities, (i: never) => Promise<unknown>>> = {}): PulseActivities =>
    ({ runPreflight: ok, makeDirs: ok, stopServer: ok, waitForMemory: ok, writeEnv: ok, startServer: ok, pollReadiness: ok, verifyServer: ok, publishState: ok, markFailed: ok, ...over }) as unknown as PulseActivities;
  const value = async (m: PulseMetrics, name: string, labels: Record<string, string> = {}): Promise<number> => {
    const metric = await m.registry.getSingleMetric(name)?.get();
    const s = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
    return s?.value ?? 0;
  };

  it('deploy results: up/down published ok, starting not counted, compensation failed, preflight refusal', async () => {
    const m = new PulseMetrics();
    const acts = instrumentActivities(fake({ runPreflight: async () => ({ ok: false }) }), m);
    const env = new MockActivityEnvironment();
    await env.run(() => acts.publishState({ state: 'starting', action: 'up' } as never));
    await env.run(() => acts.publishState({ state: 'up', action: 'up' } as never));
    await env.run(() => acts.publishState({ state: 'down', action: 'down' } as never));
    await env.run(() => acts.markFailed({ state: 'failed', action: 'down' } as never));
    await env.run(() => acts.runPreflight({} as never));
    assert.equal(await value(m, 'pulse_deploys_total', { action: 'up', result: 'ok' }), 1);
    assert.equal(await value(m, 'pulse_deploys_total', { action: 'down', result: 'ok' }), 1);
    assert.equal(await value(m, 'pulse_deploys_total', { action: 'down', result: 'failed' }), 1);
    assert.equal(await value(m, 'pulse_deploys_total', { action: 'up', result: 'preflight_failed' }), 1);
    const steps = (await m.registry.getSingleMetric('pulse_step_duration_seconds')?.get())?.values ?? [];
    const count = (step: string): number => steps.find((v) => (v as { metricName?: string }).metricName === 'pulse_step_duration_seconds_count' && v.labels['step'] === step)?.value ?? 0;
    assert.equal(count('publish'), 3);
    assert.equal(count('compensate'), 1);
    assert.equal(count('preflight'), 1);
  });

  it('the watchdog: verdict per node (1 for the current, 0 for the other), streak, heals started, healing stopped', async () => {
    const m = new PulseMetrics();
    const rec = { judged: 'down', streak: 4, gaveUp: null };
    let out: unknown = { node: 'spark2', record: rec, heal: { backup: '/r/.env', renderedAt: 't' } };
    const acts = instrumentActivities(fake({ watchdogRecord: async () => out }), m);
    const env = new MockActivityEnvironment();
    await env.run(() => acts.watchdogRecord({} as never));
    out = { node: 'spark2', record: { ...rec, streak: 5, gaveUp: 'heal budget spent' }, heal: null };
    await env.run(() => acts.watchdogRecord({} as never));
    assert.equal(await value(m, 'pulse_watchdog_verdict', { node: 'spark2', verdict: 'down' }), 1);
    assert.equal(await value(m, 'pulse_watchdog_verdict', { node: 'spark2', verdict: 'ok' }), 0);
    assert.equal(await value(m, 'pulse_watchdog_streak', { node: 'spark2' }), 5);
    assert.equal(await value(m, 'pulse_watchdog_heals_total', { node: 'spark2' }), 1);
    assert.equal(await value(m, 'pulse_watchdog_healing_stopped', { node: 'spark2' }), 1);
    out = { node: 'spark2', record: { judged: 'ok', streak: 1, gaveUp: null }, heal: null };
    await env.run(() => acts.watchdogRecord({} as never));
    assert.equal(await value(m, 'pulse_watchdog_verdict', { node: 'spark2', verdict: 'down' }), 0);
    assert.equal(await value(m, 'pulse_watchdog_healing_stopped', { node: 'spark2' }), 0);
  });

  it('a failed attempt is timed but counts no deploy; a resumed readiness wait is measured from its first attempt', async () => {
    const m = new PulseMetrics();
    const acts = instrumentActivities(fake({ publishState: async () => Promise.reject(new Error('disk full')) }), m);
    const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
    await assert.rejects(new MockActivityEnvironment({}, { logger: silent }).run(() => acts.publishState({ state: 'up', action: 'up' } as never)), /disk full/);
    assert.equal(await value(m, 'pulse_deploys_total'), 0);
    // The checkpoint of an earlier attempt (another worker) says the wait has run 120 s.
    const resumed = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: { elapsedMs: 120_000 } });
    await resumed.run(() => acts.pollReadiness({} as never));
    const wait = (await m.registry.getSingleMetric('pulse_readiness_wait_seconds')?.get())?.values ?? [];
    const sum = wait.find((v) => (v as { metricName?: string }).metricName === 'pulse_readiness_wait_seconds_sum')?.value ?? 0;
    assert.ok(sum >= 120 && sum < 180, `wait measured whole: ${sum}`);
  });

  it('the server answers /metrics with pulse_* and the Temporal text, 404 elsewhere; a dead Temporal exporter is a comment', async () => {
    const m = new PulseMetrics();
    m.deploys.inc({ action: 'up', result: 'ok' });
    const temporal = await freePort();
    const tsrv = (await import('node:http')).createServer((_q, r) => r.end('temporal_worker_task_slots_available{task_queue="pulse-deploy"} 5\n'));
    await new Promise<void>((r) => tsrv.listen(temporal, '127.0.0.1', r));
    const srv = await startMetricsServer('127.0.0.1:0', m, `127.0.0.1:${temporal}`);
    try {
      const text = await (await fetch(`http://${srv.address}/metrics`)).text();
      assert.match(text, /^pulse_deploys_total\{action="up",result="ok"\} 1$/m);
      assert.match(text, /^temporal_worker_task_slots_available\{task_queue="pulse-deploy"\} 5$/m);
      assert.equal((await fetch(`http://${srv.address}/`)).status, 404);
      await new Promise<void>((r) => tsrv.close(() => r()));
      assert.match(await (await fetch(`http://${srv.address}/metrics`)).text(), /^# temporal worker metrics unavailable: /m);
    } finally {
      await srv.close();
      tsrv.close();
    }
  });

  it('a busy metrics port is a usage error naming the address', async () => {
    const a = await startMetricsServer('127.0.0.1:0', new PulseMetrics(), null);
    try {
      await assert.rejects(startMetricsServer(a.address, new PulseMetrics(), null), (e: Error & { kind?: string }) => e.kind === 'usage' && e.message.includes(a.address));
    } finally {
      await a.close();
    }
  });
});
