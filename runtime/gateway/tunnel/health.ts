/**
 * The tunnel's health file, $PULSE_STATE_DIR/tunnel.json. `pulse tunnel` (runtime/gateway/tunnel/run.ts) rewrites it
 * atomically on every change of a node's tunnel; the gateway backend file's rules (runtime/gateway/gateway.ts) and
 * `pulse model status` read it. No ssh2 here: `pulse model fragment` reads this file and stays local-only.
 */
import path from 'node:path';
import { pidAlive } from '../../state/pid.js';
import { readFileOrNull, writeFileAtomic } from '../../state/state-files.js';
import type { FleetEntry } from '../../model/index.js';

/** One node's tunnel, as `pulse tunnel` last saw it. */
export interface TunnelNodeHealth {
  /** The gateway-side port on 127.0.0.1. */
  localPort: number;
  /** Where the node's sshd forwards to: BIND:PORT on the node. */
  remote: string;
  /** The local listener is bound. */
  listening: boolean;
  /** The ssh link (host key verified) is up. */
  connected: boolean;
  connectedSince: string | null;
  /** The last GET /health through the tunnel: ok means the server answered 200. null: none sent yet. */
  probe: { ok: boolean; at: string; detail: string } | null;
  lastError: string | null;
  lastErrorAt: string | null;
  /** How many times the ssh link came back after it was lost (the first connect does not count). */
  reconnects: number;
}

export interface TunnelHealth {
  /** The `pulse tunnel` process; the file of a dead one enables nothing. */
  pid: number;
  startedAt: string;
  updatedAt: string;
  /** Set by a clean stop (SIGTERM): the file then enables nothing, though the pid may still be alive. */
  stoppedAt?: string;
  nodes: Record<string, TunnelNodeHealth>;
}

/** What a reader knows: the file (or null), whether its writer still runs, and why it could not be read. */
export interface TunnelView {
  health: TunnelHealth | null;
  running: boolean;
  damaged: string | null;
}

export const NO_TUNNEL: TunnelView = { health: null, running: false, damaged: null };

/** $PULSE_STATE_DIR/tunnel.json */
export function tunnelHealthPath(stateDir: string): string {
  return path.join(stateDir, 'tunnel.json');
}

export function writeTunnelHealth(stateDir: string, health: TunnelHealth): void {
  writeFileAtomic(tunnelHealthPath(stateDir), `${JSON.stringify(health, null, 2)}\n`);
}

/** Read the health file (readers need no lock: the writer replaces it atomically). Never throws. */
export function readTunnelHealth(stateDir: string): TunnelView {
  let text: string | null;
  try {
    text = readFileOrNull(tunnelHealthPath(stateDir));
  } catch (e) {
    return { health: null, running: false, damaged: (e as Error).message };
  }
  if (text === null) return NO_TUNNEL;
  try {
    const h = JSON.parse(text) as TunnelHealth;
    if (typeof h.pid !== 'number' || typeof h.nodes !== 'object' || h.nodes === null) throw new Error('not a tunnel health file');
    return { health: h, running: !h.stoppedAt && pidAlive(h.pid), damaged: null };
  } catch (e) {
    return { health: null, running: false, damaged: `${tunnelHealthPath(stateDir)}: ${(e as Error).message}` };
  }
}

/** Why a tunnelled node's endpoint must be disabled, or null when the tunnel is up and a probe through it answered. */
export function tunnelDisableReason(entry: FleetEntry, view: TunnelView): string | null {
  const port = entry.tunnel?.localPort;
  if (port === undefined) return null;
  const h = view.health;
  if (!h) return view.damaged ? `the tunnel's health file cannot be read (${view.damaged})` : 'no tunnel runs: start `pulse tunnel` on the gateway host';
  if (!view.running) return `the tunnel (pid ${h.pid}) ${h.stoppedAt ? `stopped at ${h.stoppedAt}` : `is not running (last update ${h.updatedAt})`}: start \`pulse tunnel\` on the gateway host`;
  const n = h.nodes[entry.node];
  if (!n) return 'the running tunnel does not serve this node (restart `pulse tunnel` after a nodes.json change)';
  if (n.localPort !== port) return `the running tunnel listens on 127.0.0.1:${n.localPort}, nodes.json says ${port} (restart \`pulse tunnel\`)`;
  const why = n.lastError ? `: ${n.lastError}` : '';
  if (!n.listening) return `the tunnel cannot listen on 127.0.0.1:${port}${why}`;
  if (!n.connected) return `the tunnel's ssh link is down${why}`;
  if (!n.probe) return 'the tunnel is up, no probe through it has answered yet';
  if (!n.probe.ok) return `no answer through the tunnel: ${n.probe.detail}`;
  return null;
}

/** What `pulse model status` shows of a tunnelled node (text and --json). */
export interface TunnelStatus {
  /** The endpoint URL the gateway backend file gives the node. */
  url: string;
  /** The tunnel is up and a probe through it answered (the node state still decides the endpoint too). */
  up: boolean;
  /** Why not, when up is false. */
  reason: string | null;
  connectedSince: string | null;
  reconnects: number;
  lastError: string | null;
}

/** The tunnel of one node as `pulse model status` shows it; null for a node without gatewayTunnel. */
export function tunnelStatusOf(node: string, localPort: number | undefined, stateDir: string): TunnelStatus | null {
  if (localPort === undefined) return null;
  const url = `http://127.0.0.1:${localPort}/v1`;
  const view = readTunnelHealth(stateDir);
  const reason = tunnelDisableReason({ node, gatewayUrl: url, reachable: false, tunnel: { localPort, url } }, view);
  const n = view.running ? view.health?.nodes[node] : undefined;
  return { url, up: reason === null, reason, connectedSince: n?.connectedSince ?? null, reconnects: n?.reconnects ?? 0, lastError: n?.lastError ?? null };
}
