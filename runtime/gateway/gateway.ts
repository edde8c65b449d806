/**
 * The gateway backend file, $PULSE_STATE_DIR/gateway-backends.json: a partial Pulse gateway config with one
 * qwen38 model and one endpoint per node (docs/GATEWAY.md). The shape is the gateway's own config shape
 * (`models[].endpoints[]` with `name`, `baseUrl`, `enabled`), so the gateway reads it with PULSE_GATEWAY_CONFIG or
 * --config. Pulse never contacts or restarts the gateway; it prints the operator's steps (operatorSteps).
 */
import path from 'node:path';
import { PulseError } from '../errors.js';
import { scanNodeStates } from '../state/state.js';
import { readFileOrNull, withStateLock, writeFileAtomic } from '../state/state-files.js';
import { NO_TUNNEL, readTunnelHealth, tunnelDisableReason, type TunnelView } from './tunnel/health.js';
import type { FleetEntry, NodeState } from '../model/index.js';

/** The model id clients (Codex) send to the gateway; the gateway's own default for its qwen38 model. */
export const GATEWAY_MODEL_ID = 'qwen3.8-flash-next';
/** The name vLLM serves (SERVED_MODEL_NAME of the profiles) when no node state says otherwise. */
export const DEFAULT_SERVED_MODEL = 'qwen38';

export interface GatewayEndpoint {
  name: string;
  baseUrl: string;
  enabled: boolean;
  /** Why the endpoint is disabled (or why it stays enabled by the fallback). Absent on a plainly enabled one. */
  reason?: string;
}

export interface GatewayFragment {
  models: [{ id: string; upstreamModel: string; profile: 'qwen38'; endpoints: GatewayEndpoint[] }];
}

/** One endpoint in `publishFragment`'s report: its new value and whether it was enabled before. */
export interface EndpointChange extends GatewayEndpoint {
  /** true/false: enabled in the previous file; null: not in the previous file (or no previous file). */
  wasEnabled: boolean | null;
  changed: boolean;
}

/** What publishFragment did: the fragment, whether the file changed, its warnings and every endpoint's change. */
export interface FragmentResult {
  fragment: GatewayFragment;
  /** The file was (re)written: its content differs from what was on disk. */
  changed: boolean;
  warnings: string[];
  path: string;
  endpoints: EndpointChange[];
}

/** Test seam: the concurrency test widens the read-to-write window to prove the lock closes it. */
export interface PublishHooks {
  afterRead?: () => void;
}

/** $PULSE_STATE_DIR/gateway-backends.json */
export function fragmentPath(stateDir: string): string {
  return path.join(stateDir, 'gateway-backends.json');
}

/** Why this node's endpoint must be disabled, or null when it may take traffic. */
export function disableReason(entry: FleetEntry, state: NodeState | null, damaged: string | null = null, tunnel: TunnelView = NO_TUNNEL): string | null {
  if (entry.tunnel) {
    // A loopback node behind `pulse tunnel`: reachable exactly while the tunnel is up and a probe through it answers.
    const why = tunnelDisableReason(entry, tunnel);
    if (why !== null) return why;
  } else if (!entry.reachable) return 'the gateway host cannot reach this node (its server listens on loopback only)';
  if (damaged !== null) return `its state file cannot be read (${damaged})`;
  if (!state) return null; // never deployed by pulse: a server started by hand keeps its traffic (docs/GATEWAY.md)
  if (state.state === 'down') return `state down since ${state.at}`;
  if (state.state === 'starting') return `state starting since ${state.at} (a deploy is in progress)`;
  if (state.state === 'failed') return `state failed at ${state.at}${state.error ? `: ${state.error}` : ''}`;
  // The scheduled health watch (runtime/fleet/watchdog.ts): N failed checks in a row, until N good ones.
  if (state.watchdog?.disabled) return state.watchdog.disabled;
  return null;
}

/** Pure: the fragment for this fleet and these saved states, with the all-disabled fallback applied. */
export function buildFragment(
  fleet: FleetEntry[],
  states: Record<string, NodeState>,
  damaged: Record<string, string> = {},
  tunnel: TunnelView = NO_TUNNEL,
): { fragment: GatewayFragment; warnings: string[] } {
  if (fleet.length === 0) throw new PulseError('config', 'no nodes: the gateway backend file needs at least one node');
  const warnings = Object.values(damaged).map((d) => `damaged state file, its endpoint is disabled: ${d}`);
  const endpoints: GatewayEndpoint[] = fleet.map((entry) => {
    const reason = disableReason(entry, states[entry.node] ?? null, damaged[entry.node] ?? null, tunnel);
    const baseUrl = (entry.tunnel?.url ?? entry.gatewayUrl).replace(/\/+$/, '');
    if (!/\/v1$/.test(baseUrl)) warnings.push(`${entry.node}: gatewayUrl ${baseUrl} does not end in /v1; the gateway expects the OpenAI base URL`);
    return reason === null ? { name: entry.node, baseUrl, enabled: true } : { name: entry.node, baseUrl, enabled: false, reason };
  });
  const first = endpoints[0];
  if (first && !endpoints.some((e) => e.enabled)) {
    // The gateway refuses to start with a model whose endpoints are all disabled; one bad endpoint beats none.
    warnings.push(`no endpoint can be enabled; ${first.name} stays enabled because the gateway rejects a model with no enabled endpoint (${first.reason ?? ''})`);
    first.enabled = true;
    first.reason = `kept enabled by the fallback: ${first.reason ?? ''}`;
  }
  const served = new Set(Object.values(states).filter((s) => s.state === 'up' && s.servedModelName).map((s) => s.servedModelName as string));
  if (served.size > 1) warnings.push(`the nodes serve different model names (${[...served].sort().join(', ')}); the gateway sends one name to all`);
  const upstreamModel = [...served].sort()[0] ?? DEFAULT_SERVED_MODEL;
  return { fragment: { models: [{ id: GATEWAY_MODEL_ID, upstreamModel, profile: 'qwen38', endpoints }] }, warnings };
}

function previousEndpoints(text: string | null, warnings: string[]): Map<string, boolean> {
  const out = new Map<string, boolean>();
  if (text === null) return out;
  try {
    const prev = JSON.parse(text) as Partial<GatewayFragment>;
    for (const e of prev.models?.[0]?.endpoints ?? []) out.set(e.name, e.enabled !== false);
  } catch {
    warnings.push('the previous gateway backend file was not valid JSON; it is replaced');
  }
  return out;
}

/**
 * Rebuild gateway-backends.json from every saved node state, under the state lock (so a concurrent writeNodeState
 * is never lost), and rewrite it atomically only when its content changes.
 */
export async function publishFragment(stateDir: string, fleet: FleetEntry[], hooks: PublishHooks = {}): Promise<FragmentResult> {
  const file = fragmentPath(stateDir);
  return withStateLock(stateDir, () => {
    // A damaged state file disables its node's endpoint instead of failing every deploy's publish step.
    const { states, damaged } = scanNodeStates(stateDir);
    const tunnel = fleet.some((e) => e.tunnel) ? readTunnelHealth(stateDir) : NO_TUNNEL;
    const { fragment, warnings } = buildFragment(fleet, states, damaged, tunnel);
    hooks.afterRead?.();
    const text = `${JSON.stringify(fragment, null, 2)}\n`;
    const old = readFileOrNull(file);
    const before = previousEndpoints(old, warnings);
    const changed = old !== text;
    if (changed) writeFileAtomic(file, text);
    const endpoints = fragment.models[0].endpoints.map((e) => {
      const wasEnabled = before.has(e.name) ? (before.get(e.name) as boolean) : null;
      return { ...e, wasEnabled, changed: wasEnabled !== e.enabled };
    });
    return { fragment, changed, warnings, path: file, endpoints };
  });
}

/** The three steps the operator takes to make the gateway use the file; pulse does none of them. */
export function operatorSteps(file: string): string[] {
  return [
    `1. Point the gateway at the file: PULSE_GATEWAY_CONFIG=${file} (or start it with --config ${file}).`,
    '2. Unset PULSE_QWEN_BACKENDS: it replaces the endpoints of the file. For the pulse-qwen38 user service,' +
      ' remove it from ~/.config/pulse/qwen38.env.',
    '3. Restart the gateway (it reads its config only at start): systemctl --user restart pulse-qwen38',
  ];
}
