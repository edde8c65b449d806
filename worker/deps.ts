/** The real dependencies of the activities: one node pool, runtime/steps, runtime/state, wall + monotonic clock, a logger. */
import { NodePool } from '../runtime/node/connect.js';
import * as steps from '../runtime/steps/index.js';
import { publishFragment, readNodeState, writeNodeState } from '../runtime/state.js';
import type { ActivityDeps, ActivityLogger } from '../activities/deps.js';

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

export interface RealDeps {
  deps: ActivityDeps;
  /** Close every pooled node connection (after the worker has stopped). */
  close(): Promise<void>;
}

/** Build the production ActivityDeps; `overrides` replace single parts (tests, benchmarks). */
export function buildDeps(stateDir: string, logger: ActivityLogger, overrides: Partial<ActivityDeps> = {}): RealDeps {
  const pool = new NodePool();
  const deps: ActivityDeps = {
    nodes: pool,
    steps,
    state: { writeNodeState, readNodeState, publishFragment },
    stateDir,
    clock: { now: () => Date.now(), monotonic: () => performance.now() },
    logger,
    ...overrides,
  };
  return { deps, close: () => pool.closeAll() };
}
