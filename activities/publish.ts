/** The activities that write local state: node state file + gateway fragment (step 9, 'starting', compensation). */
import { Context } from '@temporalio/activity';
import type { NodeServes, NodeState } from '../runtime/model/index.js';
import type { GatewayEndpoint } from '../runtime/gateway/gateway.js';
import type { PublishResult, SparseStateInput, StateInput } from './contract.js';
import type { ActivityDeps } from './deps.js';
import { authority } from './authority.js';
import { nextLastKnownGood } from '../runtime/state/last-good.js';
import { nextEnvRuns } from '../runtime/state/env-runs.js';
import { readinessHistoryAfter, readinessOnStart } from './readiness-history.js';
import { redactSecrets, toFailure } from './errors.js';
import { isLoopback } from '../runtime/config/safe.js';

/** A deploy keeps the watchdog's record (its heal budget); a verified up clears its endpoint disable and its stop. */
function watchdogAfter(old: NodeState | null, state: NodeState['state']): Pick<NodeState, 'watchdog'> {
  const w = old?.watchdog;
  if (!w) return {};
  return { watchdog: state === 'up' ? { ...w, disabled: null, gaveUp: null } : w };
}

/** What the closing block of up/down/rollback says the node serves: the state just written and its endpoint. */
function servesOf(state: NodeState, endpoints: readonly GatewayEndpoint[] = [], env?: { BIND: string; PORT: string }): NodeServes {
  const e = endpoints.find((x) => x.name === state.node);
  return {
    ...(env ? { listen: { bind: env.BIND, port: env.PORT, loopback: isLoopback(env.BIND) } } : {}),
    state: state.state,
    profile: state.profile,
    servedModelName: state.servedModelName,
    maxModelLen: state.maxModelLen,
    endpoint: e ? { url: e.baseUrl, enabled: e.enabled, reason: e.reason ?? null } : null,
  };
}

async function publish(deps: ActivityDeps, input: StateInput | SparseStateInput, failed = false): Promise<PublishResult> {
  const { workflowExecution, attempt } = Context.current().info;
  // The node, the profile and the fleet of the gateway file are the worker's own (activities/authority.ts).
  const checked = authority(deps.files).state(failed ? { ...input, state: 'failed' } : input);
  const { fleet, state: fields, previousIdentity, listen } = checked;
  try {
    const old = await deps.state.readNodeState(deps.stateDir, fields.node);
    // Same identity, nothing new from this run (same-identity up): keep what the earlier up saved for status.
    const same = old?.identity?.sha256 !== undefined && old.identity.sha256 === fields.identity?.sha256;
    const at = new Date(deps.clock.now()).toISOString();
    const workflowId = workflowExecution?.workflowId ?? null;
    const change = { ...fields, previousIdentity };
    const state: NodeState = {
      ...fields,
      backupPath: fields.backupPath ?? (same ? old.backupPath : null),
      logPath: fields.logPath ?? (same ? old.logPath : null),
      error: fields.error === null ? null : redactSecrets(fields.error),
      workflowId,
      runId: workflowExecution?.runId ?? null,
      at,
      lastKnownGood: nextLastKnownGood(old, change, at, workflowId),
      ...nextEnvRuns(old, change, at),
      ...readinessHistoryAfter(old, fields, input, at),
      ...watchdogAfter(old, fields.state),
    };
    await deps.state.writeNodeState(deps.stateDir, state);
    const r = await deps.state.publishFragment(deps.stateDir, fleet);
    deps.logger.info(`state ${fields.state} for ${fields.node}`, { fragmentChanged: r.changed });
    return { warnings: r.warnings, changed: r.changed, ...readinessOnStart(old, fields), serves: servesOf(state, r.endpoints, listen) };
  } catch (err) {
    throw toFailure(err, attempt, false);
  }
}

export function publishActivities(deps: ActivityDeps) {
  return {
    /** Step 9 (and 'starting' before the start, 'down' after a down): node state + gateway fragment. */
    async publishState(input: StateInput | SparseStateInput): Promise<PublishResult> {
      return publish(deps, input);
    },
    /** Compensation: node state 'failed' with the first error, and the fragment disables the node's endpoint. */
    async markFailed(input: StateInput | SparseStateInput): Promise<PublishResult> {
      return publish(deps, input, true);
    },
  };
}
