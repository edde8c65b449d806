/** The real dependencies of the activities: one node pool, runtime/steps, runtime/state, wall + monotonic clock, a logger. */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { WorkerFilesSource } from '../activities/authority.js';
import { loadNodesConfig } from '../runtime/config/nodes.js';
import { loadProfiles } from '../runtime/config/profiles.js';
import type { Profile } from '../runtime/config/profile.js';
import { PulseError } from '../runtime/errors.js';
import { NodePool } from '../runtime/node/connect.js';
import { profilesDir, resolveNodesPath } from '../runtime/state/paths.js';
import * as steps from '../runtime/steps/index.js';
import { publishFragment } from '../runtime/gateway/gateway.js';
import { readNodeState, writeNodeState } from '../runtime/state/state.js';
import type { ActivityDeps, ActivityLogger } from '../activities/deps.js';
import { workerWorkflowRuns } from '../activities/rollout.js';
import { workflowIdFor } from '../workflows/definitions.js';

/**
 * $PULSE_LOCK_LEASE_S: the node lock's lease (default runtime/steps/lock.ts LOCK_LEASE_S, 120 s). Longer suits
 * flaky links (a deploy that cannot renew for a lease loses the node); shorter frees a crashed deploy's node sooner.
 */
export function lockLeaseFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env['PULSE_LOCK_LEASE_S'];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 2 || n > 86_400) throw new PulseError('usage', `PULSE_LOCK_LEASE_S must be a whole number of seconds from 2 to 86400, got "${raw}"`);
  return n;
}

/** Plain lines on stderr: `pulse worker` output is for an operator's terminal or journald. */
export function stderrLogger(prefix = 'pulse worker'): ActivityLogger & { error(message: string, meta?: Record<string, unknown>): void } {
  const line = (level: string, message: string, meta?: Record<string, unknown>): void => {
    const extra = meta && Object.keys(meta).length > 0 ? ` ${JSON.stringify(meta)}` : '';
    process.stderr.write(`${new Date().toISOString()} ${prefix} ${level}: ${message}${extra}\n`);
  };
  return {
    info: (m, meta) => line('info', m, meta),
    warn: (m, meta) => line('warn', m, meta),
    error: (m, meta) => line('error', m, meta),
  };
}

function mtimeMs(file: string): number | null {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/** The worker's nodes.json; a missing or broken one names itself as the worker's (the CLI host's may be fine). */
function ownNodes(file: string): ReturnType<typeof loadNodesConfig> {
  try {
    return loadNodesConfig(file);
  } catch (e) {
    if (e instanceof PulseError) throw new PulseError(e.kind, `the worker's nodes.json: ${e.message}`, { hint: e.hint ?? 'give pulse worker the site nodes.json (--nodes FILE or PULSE_NODES)', cause: e });
    throw e;
  }
}

/**
 * The worker's own nodes.json and profiles, read on every load (activities/authority.ts): the worker is the
 * authority over what its activities run. Defaults: $PULSE_NODES or runtime/nodes.json; $PULSE_PROFILES_DIR or the
 * shipped profiles.
 */
export function fileSource(nodesPath = resolveNodesPath(undefined), profiles = profilesDir()): WorkerFilesSource {
  return {
    load() {
      // The profiles are read when an activity asks for them, not before: a down, a stop or a drain names no profile,
      // and a profile the loader refuses (a typo, a recipe key left out) must not keep a node from being taken down.
      let part: { profiles: Map<string, Profile>; profileMtimeMs: Map<string, number> } | null = null;
      const profilePart = (): NonNullable<typeof part> => {
        if (part) return part;
        const loaded = loadProfiles(profiles);
        const profileMtimeMs = new Map<string, number>();
        for (const name of loaded.keys()) {
          const m = mtimeMs(path.join(profiles, `${name}.env`));
          if (m !== null) profileMtimeMs.set(name, m);
        }
        return (part = { profiles: loaded, profileMtimeMs });
      };
      return {
        config: ownNodes(nodesPath),
        nodesMtimeMs: mtimeMs(nodesPath),
        get profiles() {
          return profilePart().profiles;
        },
        get profileMtimeMs() {
          return profilePart().profileMtimeMs;
        },
      };
    },
  };
}

export interface RealDeps {
  deps: ActivityDeps;
  /** Close every pooled node connection (after the worker has stopped). */
  close(): Promise<void>;
}

/** Build the production ActivityDeps; `overrides` replace single parts (tests, benchmarks). */
export function buildDeps(stateDir: string, logger: ActivityLogger, overrides: Partial<ActivityDeps> = {}): RealDeps {
  const pool = new NodePool({ warm: true }); // deploys run step after step on a node: a shell started ahead saves each its exec
  const deps: ActivityDeps = {
    nodes: pool,
    steps,
    state: { writeNodeState, readNodeState, publishFragment },
    stateDir,
    files: fileSource(),
    clock: { now: () => Date.now(), monotonic: () => performance.now() },
    logger,
    workflowRuns: workerWorkflowRuns(workflowIdFor),
    ...(lockLeaseFromEnv() !== undefined ? { lockLeaseS: lockLeaseFromEnv() } : {}),
    ...overrides,
  };
  return { deps, close: () => pool.closeAll() };
}
