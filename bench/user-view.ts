/**
 * Issue 28's two figures as a user sees them, measured from outside pulse.
 *
 * `wall`: the CLI's whole wall time of `pulse model up best --node X --restart` (spawn the CLI, time it to its exit)
 * against the floor (bench/floor.ts: the same node scripts back to back over one ssh connection, no Temporal), with a
 * trace of where the CLI's time went: spawn → WorkflowExecutionStarted (node start, module loading, the connection,
 * the worker presence check, the plan and the start), the workflow itself (started → closed, history times), closed
 * → the CLI's last output line (the follow noticing the close, the closing block) and → exit. Goal: within +0.5 s.
 *
 * `ready`: from the moment the simulated server can first answer (it records when it listens) to pulse's verify
 * request reaching it (the first request once verify started), with where it went: the listen → the
 * readiness step's completion, the workflow task, verify's dispatch, verify's script until its first request.
 * Goal: median ≤ 100 ms. The server needs 2 s to listen, so the wait really waits.
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/user-view.js wall|ready [reps]
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import type { temporal } from '@temporalio/proto';
import { openSession } from '../runtime/node/connect.js';
import { workflowIdFor } from '../workflows/definitions.js';
import { CLI } from '../test/helpers/cli.js';
import { startStack, type Stack } from '../test/helpers/stack.js';
import { floorUp } from './floor.js';
import { median, printTable, round, runMain, timeMs, writeResult } from './lib.js';

const MODE = process.argv[2] ?? 'wall';
const REPS = Number(process.argv[3] ?? 5);
type Event = temporal.api.history.v1.IHistoryEvent;
const ms = (e: Event | undefined): number => Number(e?.eventTime?.seconds ?? 0) * 1000 + Math.floor((e?.eventTime?.nanos ?? 0) / 1e6);
function osLoad(): number[] {
  return os.loadavg().map((x) => round(x, 2));
}

/** A CLI run, timed from spawn to exit, with each output line's time since the spawn. */
function timedCli(args: string[], env: Record<string, string>): Promise<{ wallMs: number; t0: number; lines: { ms: number; line: string }[]; code: number | null }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const p0 = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: { ms: number; line: string }[] = [];
    let buf = '';
    const onData = (d: Buffer): void => {
      const at = performance.now() - p0;
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      for (const line of parts) lines.push({ ms: round(at, 1), line });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('close', (code) => resolve({ wallMs: performance.now() - p0, t0, lines, code }));
  });
}

async function historyOf(stack: Stack, node: string): Promise<Event[]> {
  return (await stack.client.workflow.getHandle(workflowIdFor(node)).fetchHistory()).events ?? [];
}

async function wall(): Promise<void> {
  const stack = await startStack({ nodes: ['simF', 'simT'], readyDelayMs: 0, memory: { recoverMs: 0 } });
  Object.assign(process.env, stack.env);
  const args = ['model', 'up', 'best', '--node', 'simT', '--restart'];
  try {
    const bare = await timeMs(() => new Promise<void>((r) => spawn(process.execPath, ['-e', ''], { stdio: 'ignore' }).once('close', () => r())));
    const warm = await timedCli(args, stack.env);
    if (warm.code !== 0) throw new Error(`warm-up up failed:\n${warm.lines.map((l) => l.line).join('\n')}`);
    const session = await openSession(stack.planUp('simF').target);
    const rows: Record<string, number | string>[] = [];
    const traces: unknown[] = [];
    try {
      await floorUp(session, stack, stack.planUp('simF', 'best', { restart: true }), true, -1);
      for (let rep = 0; rep < REPS; rep++) {
        const loadAt = osLoad()[0] ?? NaN;
        const floor = (await timeMs(() => floorUp(session, stack, stack.planUp('simF', 'best', { restart: true }), true, rep))).ms;
        const cli = await timedCli(args, stack.env);
        if (cli.code !== 0) throw new Error(`up failed (${cli.code}):\n${cli.lines.map((l) => l.line).join('\n')}`);
        const ev = await historyOf(stack, 'simT');
        const started = ms(ev[0]) - cli.t0;
        const firstActivity = ms(ev.find((e) => e.activityTaskStartedEventAttributes)) - cli.t0;
        const closed = ms(ev.at(-1)) - cli.t0;
        const lastLine = cli.lines.at(-1)?.ms ?? NaN;
        // The first line printed after the close: the follow noticed it (the closing block starts there).
        const afterClose = cli.lines.find((l) => l.ms >= closed)?.ms ?? NaN;
        rows.push({
          rep: rep + 1, floorMs: round(floor, 0), cliMs: round(cli.wallMs, 0), addedMs: round(cli.wallMs - floor, 0),
          toStartedMs: started, startedToFirstActivityMs: firstActivity - started, workflowMs: closed - started,
          closeNoticedMs: round(afterClose - closed, 0), noticedToLastLineMs: round(lastLine - afterClose, 0), lastLineToExitMs: round(cli.wallMs - lastLine, 0), load1: loadAt,
        });
        traces.push({ rep: rep + 1, startedMs: started, firstActivityMs: firstActivity, closedMs: closed, lines: cli.lines });
      }
    } finally {
      await session.close();
    }
    const med = (k: string): number => round(median(rows.map((r) => Number(r[k]))), 0);
    const keys = ['floorMs', 'cliMs', 'addedMs', 'toStartedMs', 'startedToFirstActivityMs', 'workflowMs', 'closeNoticedMs', 'noticedToLastLineMs', 'lastLineToExitMs'];
    const m = Object.fromEntries(keys.map((k) => [k, med(k)]));
    printTable(`pulse model up best --restart, whole CLI wall vs the floor (median of ${REPS}); bare node -e '' ${round(bare.ms, 0)} ms`, [...rows, { rep: 'median', ...m }]);
    writeResult('user-view-wall', {
      reps: REPS, command: `pulse ${args.join(' ')}`, goal: 'added ≤ 500 ms', met: (m['addedMs'] ?? Infinity) <= 500, bareNodeMs: round(bare.ms, 0),
      medianMs: m, rows, loadAtEnd: osLoad(), traces,
    });
  } finally {
    await stack.stop();
  }
}

async function ready(): Promise<void> {
  const stack = await startStack({ nodes: ['simR'], readyDelayMs: 2000, memory: { recoverMs: 0 } });
  try {
    const rows: Record<string, number | string>[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const loadAt = osLoad()[0] ?? NaN;
      const t0 = Date.now();
      const handle = await stack.start(stack.planUp('simR', 'best', { restart: true }), { as: 'cli' });
      const out = await stack.outcome(handle);
      if (out.status !== 'succeeded') throw new Error(`deploy ${out.status}: ${out.error}`);
      const node = stack.sim.node('simR');
      const listen = node.listens().map((l) => Date.parse(l.at)).filter((t) => t >= t0).sort((a, b) => a - b)[0];
      if (listen === undefined) throw new Error('the sim recorded no listen');
      const ev = (await handle.fetchHistory()).events ?? [];
      const sched = (type: string): Event | undefined => ev.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type).at(-1);
      const by = (f: (e: Event) => unknown, id: unknown): Event | undefined => ev.find((e) => Number(f(e) ?? -1) === Number(id));
      const rs = sched('pollReadiness');
      const vs = sched('verifyServer');
      const rDone = ms(by((e) => e.activityTaskCompletedEventAttributes?.scheduledEventId, rs?.eventId));
      const vStarted = ms(by((e) => e.activityTaskStartedEventAttributes?.scheduledEventId, vs?.eventId));
      const reqs = node.requests().map((r) => ({ ...r, t: Date.parse(r.at) })).filter((r) => r.t >= listen);
      // verify's first request: the first to arrive once verify started (start.sh's own poll may ask before it).
      const verifyReq = reqs.find((r) => r.t >= vStarted)?.t ?? NaN;
      const first200 = reqs.find((r) => r.path === '/v1/models' && r.status === 200)?.t ?? NaN;
      rows.push({
        rep: rep + 1, listenToVerifyReqMs: verifyReq - listen, listenToFirst200Ms: first200 - listen, listenToReadyDoneMs: rDone - listen,
        workflowTaskMs: ms(vs) - rDone, dispatchMs: vStarted - ms(vs), verifyStartToRequestMs: verifyReq - vStarted, first200ToVerifyStartMs: vStarted - first200, load1: loadAt,
      });
    }
    const keys = ['listenToVerifyReqMs', 'listenToFirst200Ms', 'listenToReadyDoneMs', 'workflowTaskMs', 'dispatchMs', 'verifyStartToRequestMs', 'first200ToVerifyStartMs'];
    const m = Object.fromEntries(keys.map((k) => [k, round(median(rows.map((r) => Number(r[k]))), 0)]));
    const max = Math.max(...rows.map((r) => Number(r['listenToVerifyReqMs'])));
    printTable(`server can answer -> pulse's verify request reaches it (median of ${REPS})`, [...rows, { rep: 'median', ...m }]);
    writeResult('user-view-ready', { reps: REPS, goal: 'median ≤ 100 ms', met: (m['listenToVerifyReqMs'] ?? Infinity) <= 100, medianMs: m, maxMs: max, rows, loadAtEnd: osLoad() });
  } finally {
    await stack.stop();
  }
}

runMain(MODE === 'ready' ? ready : wall);
