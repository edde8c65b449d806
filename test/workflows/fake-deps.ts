/** ActivityDeps with fake step functions and an in-memory state store: the REAL activities over a scripted node. */
import path from 'node:path';
import type { WorkerFilesSource } from '../../activities/authority.js';
import type { ActivityDeps, StepFunctions } from '../../activities/deps.js';
import { buildUpPlan } from '../../runtime/plan/plan.js';
import { fileSource } from '../../worker/deps.js';
import type { UpPlan } from '../../runtime/model/index.js';
import type { NodeSession } from '../../runtime/node/types.js';
import type { FleetEntry, NodeState } from '../../runtime/model/index.js';
import { preflight } from './fixtures.js';
import { REPO_ROOT } from '../helpers/paths.js';

export interface MemoryState {
  states: Map<string, NodeState>;
  history: NodeState[];
  fragments: FleetEntry[][];
}

/** The worker's own files of these tests: test/fixtures/nodes/fleet.json and the shipped profiles. */
export const FIXTURE_FILES: WorkerFilesSource = fileSource(path.join(REPO_ROOT, 'test', 'fixtures', 'nodes', 'fleet.json'), path.join(REPO_ROOT, 'runtime', 'qwen38', 'profiles'));

/** A plan the fixture worker accepts (the CLI's builder over its files), with option fields changed by `over`. */
export function workerPlan(over: { readiness?: UpPlan['readiness']; memory?: UpPlan['memory'] } = {}): UpPlan {
  const { config, profiles } = FIXTURE_FILES.load();
  const plan = buildUpPlan(config, profiles, { profile: 'best', node: 'spark2', overlay: null, overlayWins: false, yes: false, restart: false }, new Date('2026-09-23T10:15:00Z'));
  return { ...plan, ...over };
}

export function fakeDeps(over: Partial<StepFunctions>, extra: Partial<ActivityDeps> = {}): { deps: ActivityDeps; mem: MemoryState } {
  const mem: MemoryState = { states: new Map(), history: [], fragments: [] };
  const steps: StepFunctions = {
    runPreflight: async () => preflight(),
    nodeLock: async () => null,
    makeDirs: async () => undefined,
    sampleDrain: async () => ({ source: 'metrics', running: 0, waiting: 0, connections: null, shutdownTimeoutS: null, detail: 'GET /metrics: 0 running, 0 waiting' }),
    stopServer: async () => ({ wasRunning: true, containerGone: true }),
    sampleMemory: async (_s, gate) => ({ memAvailableGiB: gate + 1, gateGiB: gate, watermarkScaleFactor: 10 }),
    writeEnv: async () => ({ written: true, backupPath: '/srv/qwen38/.env.pulse-bak-x', carriedSecretLines: 0 }),
    startServer: async (_s, plan) => ({ started: true, logPath: `${plan.recipe.dir}/logs/pulse-up-${plan.stamp}.log` }),
    probeReadiness: async () => ({ ready: true, httpStatus: 200, detail: 'ok' }),
    followServerLog: async () => false, // no log to follow: the readiness wait probes on its period alone
    verifyServer: async () => ({ ok: true, servedModelName: 'qwen38', maxModelLen: 1, kvCacheLine: 'kv', proofs: [], problems: [], warnings: [] }),
    ...over,
  };
  const session = { target: { name: 'fake', host: 'local' }, run: async () => { throw new Error('fake session'); }, close: async () => undefined } as unknown as NodeSession;
  const deps: ActivityDeps = {
    nodes: { session: () => session },
    steps,
    state: {
      writeNodeState: async (_dir, s) => { mem.states.set(s.node, s); mem.history.push(s); },
      readNodeState: async (_dir, node) => mem.states.get(node) ?? null,
      publishFragment: async (_dir, fleet) => { mem.fragments.push(fleet); return { changed: true, warnings: [] }; },
    },
    stateDir: '/nonexistent',
    files: FIXTURE_FILES,
    clock: { now: () => Date.now(), monotonic: () => performance.now() },
    logger: { info: () => undefined, warn: () => undefined },
    readinessProbeMs: 1000, // the probe cadence these tests count with
    ...extra,
  };
  return { deps, mem };
}
