/**
 * Fleet scale: `up` on 1, 8 and 32 simulated nodes at once, served by one `pulse worker` process (a fresh one per
 * round, so its peak RSS, VmHWM, belongs to that round). Wall time runs from the first start to the last result;
 * every deploy is a full up (--restart). Goal: 32 nodes <= 3x one node.
 *
 * The simulated vLLM needs READY_MS to listen (default 1000; pass 10000 for a wait closer to a real server, whose
 * start takes minutes): with a short wait the 2-core test machine running 32 simulated servers is the limit, so
 * the same ups are also run as the floor (node scripts over one connection per node, no Temporal) for comparison.
 * Both sides start alike: every node serves the profile before the first round (so each side's full up stops a
 * running server and waits for its memory), and the floor opens its ssh connections inside its timed part, as the
 * fresh worker must (until 2026-12-04 the floor's first round found empty nodes and pre-opened connections). The
 * build's version is registered on the server before the first round (one up through a worker, `firstBuild` in the
 * result): that ~1.2 s is paid once per pulse release per server, and was inside the 1-node round until session 9.
 *
 * Where the time goes, per round (medians over the round's deploys): the floor's time per step, and pulse's from
 * each workflow history (the start RPC, the first workflow task, time inside each activity, activity dispatch, the
 * workflow tasks between activities, the result reaching the client); CPU seconds of the worker, the Temporal
 * server and the whole machine during each side; docker calls and /v1/models requests on the nodes (each node runs
 * its own real dockerd, 32 of them at 32 nodes, ~3.6 GB RSS with their containerds; each docker call is a real
 * client talking to it: the 32 simulated nodes cost CPU on both sides).
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/fleet.js [sizes, e.g. 1,8,32] [READY_MS]
 * (results: bench/results/fleet.json, or fleet-ready<N>s.json for another READY_MS)
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import type { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { openSession } from '../runtime/node/connect.js';
import { startStack, type Stack } from '../test/helpers/stack.js';
import { floorUp } from './floor.js';
import { median, printTable, round, runMain, timeMs, writeResult } from './lib.js';

const SIZES = (process.argv[2] ?? '1,8,32').split(',').map(Number);
const READY_MS = Number(process.argv[3] ?? 1000);

type Event = temporal.api.history.v1.IHistoryEvent;
const eventMs = (e: Event | undefined): number => Number(e?.eventTime?.seconds ?? 0) * 1000 + Math.floor((e?.eventTime?.nanos ?? 0) / 1e6);

function peakRssMiB(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** User + system CPU seconds the process has used so far (NaN when it is gone). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/** CPU seconds the whole machine spent busy so far (all cores; other sessions included). */
function machineBusyS(): number {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return (f.reduce((a, b) => a + b, 0) - idle) / 100;
}

/**
 * CPU seconds used so far by every process under this one (the simulated nodes' sshd, bash, docker and vLLM
 * processes, the worker, the Temporal server), children they already reaped included; not this process itself.
 */
function treeCpuS(): number {
  const parent = new Map<number, number>();
  const cpu = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      parent.set(Number(d), Number(f[1]));
      cpu.set(Number(d), (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100);
    } catch {
      /* gone meanwhile */
    }
  }
  const under = (pid: number): boolean => {
    for (let p = parent.get(pid), i = 0; p !== undefined && p > 1 && i < 64; p = parent.get(p), i++) if (p === process.pid) return true;
    return false;
  };
  let sum = 0;
  for (const [pid, s] of cpu) if (under(pid)) sum += s;
  return sum;
}

/** Docker calls and /v1/models requests on `names` since `since` (epoch ms). */
function nodeCalls(stack: Stack, names: string[], since: number): { dockerCalls: number; modelsRequests: number } {
  let dockerCalls = 0;
  let modelsRequests = 0;
  for (const n of names) {
    const node = stack.sim.node(n);
    dockerCalls += node.dockerCalls().filter((c) => Date.parse(c.at) >= since).length;
    modelsRequests += node.requests().filter((r) => r.path === '/v1/models' && Date.parse(r.at) >= since).length;
  }
  return { dockerCalls, modelsRequests };
}

/** The steps of a full up as the floor runs them; pulse's activities map onto them (plus its own frame steps). */
const STEP_OF: Record<string, string> = {
  checkPlan: 'check', acquireNodeLock: 'lock', runPreflight: 'preflight', makeDirs: 'mkdir', drainServer: 'drain', stopServer: 'stop', waitForMemory: 'memory',
  writeEnv: 'writeEnv', startServer: 'start', pollReadiness: 'readiness', verifyServer: 'verify', releaseNodeLock: 'unlock',
};

/** Where one deploy's wall time went (ms), from its history and the client's own clock. */
interface PulseParts {
  /** Client's start call to WorkflowExecutionStarted. */
  startRpc: number;
  /** WorkflowExecutionStarted to the first activity's scheduling: the first workflow task. */
  firstTask: number;
  /** Inside each step's activity (started to completed), by step. */
  steps: Record<string, number>;
  /** Sum of scheduled to started over the activities. */
  dispatch: number;
  /** Sum of one activity's end to the next one's scheduling (the workflow tasks in between), after the first. */
  workflowTasks: number;
  /** Last activity's end to WorkflowExecutionCompleted. */
  lastTask: number;
  /** WorkflowExecutionCompleted to the client holding the result. */
  toClient: number;
  total: number;
  /** Workflow tasks: how many, summed time scheduled to started (waiting for a poll) and started to completed (the worker). */
  wftCount: number;
  wftQueue: number;
  wftRun: number;
  /** Workflow tasks that timed out or failed (a sticky task not picked up in time goes back to the normal queue). */
  wftTimedOut: number;
}

function partsOf(events: Event[], t0: number, t1: number): PulseParts {
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const started = events.find((e) => e.workflowExecutionStartedEventAttributes);
  const done = events.find((e) => e.workflowExecutionCompletedEventAttributes);
  const steps: Record<string, number> = {};
  let dispatch = 0;
  let workflowTasks = 0;
  let firstSched: number | null = null;
  let lastEnd: number | null = null;
  let wftCount = 0;
  let wftQueue = 0;
  let wftRun = 0;
  let wftTimedOut = 0;
  for (const e of events) {
    const ws = e.workflowTaskStartedEventAttributes;
    if (ws) {
      wftCount += 1;
      wftQueue += eventMs(e) - eventMs(byId.get(Number(ws.scheduledEventId)));
    }
    const wc = e.workflowTaskCompletedEventAttributes;
    if (wc) wftRun += eventMs(e) - eventMs(byId.get(Number(wc.startedEventId)));
    if (e.workflowTaskTimedOutEventAttributes || e.workflowTaskFailedEventAttributes) wftTimedOut += 1;
    if (e.activityTaskScheduledEventAttributes) {
      if (firstSched === null) firstSched = eventMs(e);
      if (lastEnd !== null) workflowTasks += eventMs(e) - lastEnd;
    }
    const c = e.activityTaskCompletedEventAttributes;
    if (!c) continue;
    const s = byId.get(Number(c.startedEventId));
    const sched = byId.get(Number(c.scheduledEventId));
    const type = sched?.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
    // publishState runs twice: the 'starting' write (before start) and step 9.
    const name = type === 'publishState' ? (steps['start'] === undefined ? 'starting' : 'publish') : (STEP_OF[type] ?? type);
    steps[name] = (steps[name] ?? 0) + eventMs(e) - eventMs(s);
    dispatch += eventMs(s) - eventMs(sched);
    lastEnd = eventMs(e);
  }
  return {
    startRpc: eventMs(started) - t0,
    firstTask: (firstSched ?? NaN) - eventMs(started),
    steps,
    dispatch,
    workflowTasks,
    lastTask: eventMs(done) - (lastEnd ?? NaN),
    toClient: t1 - eventMs(done),
    total: t1 - t0,
    wftCount,
    wftQueue,
    wftRun,
    wftTimedOut,
  };
}

/** Median of each field (and of each step) over the deploys of a round. */
function medianParts(all: PulseParts[]): Record<string, number> {
  const out: Record<string, number> = {};
  const keys = ['startRpc', 'firstTask', 'dispatch', 'workflowTasks', 'lastTask', 'toClient', 'total', 'wftCount', 'wftQueue', 'wftRun', 'wftTimedOut'] as const;
  for (const k of keys) out[k] = round(median(all.map((p) => p[k])), 0);
  for (const s of [...new Set(all.flatMap((p) => Object.keys(p.steps)))]) out[`step:${s}`] = round(median(all.map((p) => p.steps[s] ?? 0)), 0);
  return out;
}

interface Usage {
  workerCpuS: number;
  serverCpuS: number;
  benchCpuS: number;
  /** Every process under the bench (nodes, worker, server). */
  treeCpuS: number;
  machineBusyS: number;
  loadavg1: number;
}

async function measured<T>(workerPid: number | undefined, serverPid: number | undefined, fn: () => Promise<T>): Promise<{ ms: number; value: T; usage: Usage }> {
  const before = { w: cpuSeconds(workerPid), s: cpuSeconds(serverPid), b: process.cpuUsage(), m: machineBusyS(), t: treeCpuS() };
  const r = await timeMs(fn);
  const b = process.cpuUsage(before.b);
  return {
    ...r,
    usage: {
      workerCpuS: round(cpuSeconds(workerPid) - before.w, 2),
      serverCpuS: round(cpuSeconds(serverPid) - before.s, 2),
      benchCpuS: round((b.user + b.system) / 1e6, 2),
      treeCpuS: round(treeCpuS() - before.t, 2),
      machineBusyS: round(machineBusyS() - before.m, 2),
      loadavg1: round(os.loadavg()[0] ?? NaN, 1),
    },
  };
}

async function main(): Promise<void> {
  const max = Math.max(...SIZES);
  const stack = await startStack({ nodes: max, readyDelayMs: READY_MS, memory: { recoverMs: 500 }, worker: false });
  Object.assign(process.env, stack.env); // the floor's ssh resolves the sim aliases like the worker does
  const serverPid = (stack.server as { process?: { pid?: number } }).process?.pid;
  try {
    // Every node serves the profile before the first round, as after any earlier round: each side's full up then
    // stops a running server and waits for its memory (a fresh node has nothing to stop, which favoured whoever came first).
    const all = stack.sim.nodes.slice(0, max).map((x) => x.name);
    await Promise.all(all.map(async (node) => {
      const s = await openSession(stack.planUp(node).target);
      try {
        await floorUp(s, stack, stack.planUp(node), true, -1, 100);
      } finally {
        await s.close();
      }
    }));
    // The build's first worker on this server registers its deployment version and makes it current before any task
    // reaches it (worker/versioning.ts): ~1.2 s once per pulse release per server, not per deploy. One up runs through
    // it here, outside the timed rounds, as the floor's first container and connection above are; its delay is kept.
    const firstBuild = await (async () => {
      const w = await stack.startWorker();
      try {
        const h = await stack.start(stack.planUp(all[0]!, 'best', { restart: true }), { as: 'cli' });
        await stack.outcome(h);
        const ev = (await h.fetchHistory()).events ?? [];
        const firstActivity = ev.find((e) => Number(e.eventType) === 10); // ACTIVITY_TASK_SCHEDULED
        return { startToFirstActivityMs: eventMs(firstActivity) - eventMs(ev[0]) };
      } finally {
        await w.kill('SIGTERM');
      }
    })();
    const rows = [];
    const detail: { nodes: number; side: string; parts: Record<string, number> }[] = [];
    for (const n of SIZES) {
      const names = stack.sim.nodes.slice(0, n).map((x) => x.name);
      // The floor: the same full ups at once, one connection per node (opened in the timed part: the fresh worker opens
      // its own there too), readiness polled every 100 ms, no Temporal.
      const floorLaps: Record<string, number>[] = names.map(() => ({}));
      const floorSince = Date.now();
      const sessions: { close(): Promise<void> }[] = [];
      const floor = await measured(undefined, serverPid, () => Promise.all(names.map(async (node, i) => {
        let last = performance.now();
        const lap = (step: string): void => {
          const now = performance.now();
          floorLaps[i]![step] = now - last;
          last = now;
        };
        const session = await openSession(stack.planUp(node).target);
        sessions.push(session);
        lap('connect');
        return floorUp(session, stack, stack.planUp(node, 'best', { restart: true }), true, n, 100, lap);
      })));
      const floorCalls = nodeCalls(stack, names, floorSince);
      await Promise.all(sessions.map((s) => s.close()));
      const floorSteps: Record<string, number> = {};
      for (const s of Object.keys(floorLaps[0] ?? {})) floorSteps[`step:${s}`] = round(median(floorLaps.map((l) => l[s] ?? 0)), 0);
      detail.push({ nodes: n, side: 'floor', parts: { wallMs: round(floor.ms, 0), ...floor.usage, ...floorCalls, ...floorSteps } });
      {
        const worker = await stack.startWorker();
        const pulseSince = Date.now();
        const parts: PulseParts[] = [];
        const { ms, value, usage } = await measured(worker.pid, serverPid, async () => {
          const started = await Promise.all(names.map(async (node) => {
            const t0 = Date.now();
            return { t0, handle: await stack.start(stack.planUp(node, 'best', { restart: true }), { as: 'cli' }) };
          }));
          return Promise.all(started.map(async ({ t0, handle }: { t0: number; handle: WorkflowHandle }) => {
            const out = await stack.outcome(handle);
            return { out, t0, t1: Date.now(), handle };
          }));
        });
        const pulseCalls = nodeCalls(stack, names, pulseSince);
        for (const v of value) parts.push(partsOf((await v.handle.fetchHistory()).events ?? [], v.t0, v.t1));
        const ok = value.filter((o) => o.out.status === 'succeeded').length;
        rows.push({ nodes: n, wallS: ms / 1000, floorWallS: floor.ms / 1000, vsFloor: ms / floor.ms, succeeded: `${ok}/${n}`, workerPeakRssMiB: peakRssMiB(worker.pid), workerCpuS: cpuSeconds(worker.pid), loadavg1: usage.loadavg1 });
        // Workflow tasks that timed out, over the whole round (the median hides them): each cost the 10 s task timeout.
        const wftTimedOutAll = parts.reduce((a, p) => a + p.wftTimedOut, 0);
        detail.push({ nodes: n, side: 'pulse', parts: { wallMs: round(ms, 0), ...usage, ...pulseCalls, ...medianParts(parts), wftTimedOutAll } });
        await worker.kill('SIGTERM');
      }
    }
    const one = rows.find((r) => r.nodes === 1)?.wallS ?? NaN;
    const withRatio = rows.map((r) => ({ ...r, vsOneNode: r.wallS / one }));
    printTable(`fleet scale: concurrent full ups, one worker, server ready after ${READY_MS} ms`, withRatio);
    // Where the time went: one column per round and side (medians over the round's deploys, ms; CPU in s).
    const keys = [...new Set(detail.flatMap((d) => Object.keys(d.parts)))];
    printTable('where the time went (ms; CPU s; medians over each round\'s deploys)', keys.map((k) => ({
      what: k,
      ...Object.fromEntries(detail.map((d) => [`${d.side} ${d.nodes}`, d.parts[k] ?? null])),
    })));
    const biggest = withRatio[withRatio.length - 1];
    writeResult(READY_MS === 1000 ? 'fleet' : `fleet-ready${READY_MS / 1000}s`, {
      readyMs: READY_MS,
      firstBuild,
      rows: withRatio.map((r) => ({ ...r, wallS: round(r.wallS, 2), floorWallS: round(r.floorWallS, 2), vsFloor: round(r.vsFloor, 2), workerPeakRssMiB: round(r.workerPeakRssMiB, 1), workerCpuS: round(r.workerCpuS, 2), vsOneNode: round(r.vsOneNode, 2) })),
      floorVsOneNode: withRatio.map((r) => ({ nodes: r.nodes, ratio: round(r.floorWallS / (withRatio[0]?.floorWallS ?? NaN), 2) })),
      where: detail,
      goal: '32 nodes <= 3x one node',
      met: biggest ? biggest.vsOneNode <= 3 && withRatio.every((r) => r.succeeded === `${r.nodes}/${r.nodes}`) : false,
    });
  } finally {
    await stack.stop();
  }
}

runMain(main);
