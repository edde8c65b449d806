/** The steps that change a node: mkdir, stop, memory sample, write .env, start. Each is idempotent on the node. */
import { PulseError } from '../errors.js';
import type { MemorySample, PlanRecipe, StartResult, StopResult, UpPlan, WriteEnvResult } from '../model/index.js';
import type { NodeSession } from '../node/types.js';
import { SCRIPT_EXIT } from '../node/types.js';
import { memoryInputs, mkdirInputs, probeHost, recipeInputs, startInputs, writeEnvInputs } from './inputs.js';
import { bool, lastRecord, num, runStep, str } from './run.js';
import type { StepOptions } from './run.js';

/** Create the plan's pulse-mkdir directories (mkdir -p; existing ones are fine). */
export async function makeDirs(session: NodeSession, plan: UpPlan, opts?: StepOptions): Promise<void> {
  if (plan.mkdirs.length === 0) return;
  await runStep(session, 'mkdir', mkdirInputs(plan), opts);
}

/**
 * Run the recipe's stop.sh, then make sure the container is gone (docker rm -f if it lingers). With the server's
 * address (`at`: its port and bind), stop.sh first reads what is in flight right before the signal (StopResult.atSignal).
 */
export async function stopServer(session: NodeSession, recipe: PlanRecipe, opts?: StepOptions, at?: { port: number; bind: string }): Promise<StopResult> {
  const where: Record<string, string> = at ? { PULSE_PORT: String(at.port), PULSE_PROBE_HOST: probeHost(at.bind) } : {};
  const result = await runStep(session, 'stop', { ...recipeInputs(recipe), ...where }, opts);
  const r = lastRecord(result, 'stopped');
  const source = str(r, 'atSignalSource');
  return {
    wasRunning: bool(r, 'wasRunning'), containerGone: bool(r, 'containerGone'), before: str(r, 'before') ?? 'absent',
    exitCode: num(r, 'exitCode'), exitMeaning: str(r, 'exitMeaning') || null,
    atSignal: num(r, 'atSignal'), atSignalSource: source === 'metrics' || source === 'connections' ? source : null, atSignalDetail: str(r, 'atSignalDetail') || null,
  };
}

/** One MemAvailable sample against the gate; the caller (an activity) polls until it passes or times out. */
export async function sampleMemory(session: NodeSession, gateGiB: number, opts?: StepOptions): Promise<MemorySample> {
  const result = await runStep(session, 'memory', memoryInputs(gateGiB), opts, [SCRIPT_EXIT.notReady]);
  const r = lastRecord(result, 'memory');
  const kib = num(r, 'memAvailableKiB');
  if (kib === null) throw new PulseError('script', `${session.target.name}: step memory: no MemAvailable in /proc/meminfo`);
  const wsf = num(r, 'watermarkScaleFactor');
  return { memAvailableGiB: Math.round((kib / 1048576) * 100) / 100, gateGiB, watermarkScaleFactor: wsf };
}

/** Pruning is reported only by a write (a skipped write prunes nothing and says nothing). */
function pruned(n: number | null): { prunedBackups?: number } {
  return n === null ? {} : { prunedBackups: n };
}

/** Back up and atomically replace the recipe .env, unless the node already has the same identity. */
export async function writeEnv(session: NodeSession, plan: UpPlan, opts?: StepOptions): Promise<WriteEnvResult> {
  const result = await runStep(session, 'write-env', writeEnvInputs(plan), opts);
  const r = lastRecord(result, 'write-env');
  if (!r) throw new PulseError('script', `${session.target.name}: step write-env reported nothing`);
  return { written: bool(r, 'written'), backupPath: str(r, 'backup') || null, carriedSecretLines: num(r, 'carried') ?? 0, ...pruned(num(r, 'pruned')) };
}

/** Launch start.sh detached (setsid, env -i); a second call with the same deployId does not start again. */
export async function startServer(session: NodeSession, plan: UpPlan, deployId: string, opts?: StepOptions): Promise<StartResult> {
  const result = await runStep(session, 'start', startInputs(plan, deployId), opts);
  const r = lastRecord(result, 'start');
  const logPath = str(r, 'log');
  if (!r || !logPath) throw new PulseError('script', `${session.target.name}: step start reported no log path`);
  return { started: bool(r, 'started'), logPath };
}
