/** ActivityDeps with fake step functions and an in-memory state store: the REAL activities over a scripted node. */
import type { ActivityDeps, StepFunctions } from '../../activities/deps.js';
import type { NodeSession } from '../../runtime/node/types.js';
import type { FleetEntry, NodeState } from '../../workflows/types.js';
import { preflight } from './fixtures.js';

export interface MemoryState {
  states: Map<string, NodeState>;
  history: NodeState[];
  fragments: FleetEntry[][];
}

export function fakeDeps(over: Partial<StepFunctions>, extra: Partial<ActivityDeps> = {}): { deps: ActivityDeps; mem: MemoryState } {
  const mem: MemoryState = { states: new Map(), history: [], fragments: [] };
  const steps: StepFunctions = {
    runPreflight: async () => preflight(),
    makeDirs: async () => undefined,
    stopServer: async () => ({ wasRunning: true, containerGone: true }),
    sampleMemory: async (_s, gate) => ({ memAvailableGiB: gate + 1, gateGiB: gate, watermarkScaleFactor: 10 }),
    writeEnv: async () => ({ written: true, backupPath: '/srv/qwen38/.env.pulse-bak-x', carriedSecretLines: 0 }),
    startServer: async () => ({ started: true, logPath: '/srv/qwen38/logs/x.log' }),
    probeReadiness: async () => ({ ready: true, httpStatus: 200, detail: 'ok' }),
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
    clock: { now: () => Date.now(), monotonic: () => performance.now() },
    logger: { info: () => undefined, warn: () => undefined },
    ...extra,
  };
  return { deps, mem };
}
