/**
 * The tunnel rig (test/e2e/tunnel.test.ts, bench/tunnel-reconnect.ts): a sim whose spark2 gets a gatewayTunnel in
 * nodes.json (its BIND stays 127.0.0.1), and readers of the gateway backend file and the tunnel's health file.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Sim } from '../sim/index.js';
import { servingEndpoint } from '../../runtime/fleet/rollout.js';
import type { TunnelHealth } from '../../runtime/gateway/tunnel/health.js';

export interface Endpoint {
  name: string;
  baseUrl: string;
  enabled: boolean;
  reason?: string;
}

/** Rewrite the sim's nodes.json with `gatewayTunnel: { localPort }` on `node` (spark1 stays the gateway node). */
export function writeTunnelNodesJson(sim: Sim, file: string, node: string, localPort: number): void {
  sim.writeNodesJson(file, {
    protected: [],
    transform: (json) => {
      const nodes = json['nodes'] as Record<string, Record<string, unknown>>;
      (nodes[node] as Record<string, unknown>)['gatewayTunnel'] = { localPort };
      return json;
    },
  });
}

/** The endpoint of `node` in $stateDir/gateway-backends.json (undefined: no file yet, or no such endpoint). */
export function endpointOf(stateDir: string, node: string): Endpoint | undefined {
  try {
    const f = JSON.parse(readFileSync(path.join(stateDir, 'gateway-backends.json'), 'utf8')) as { models: { endpoints: Endpoint[] }[] };
    return f.models[0]?.endpoints.find((e) => e.name === node);
  } catch {
    return undefined;
  }
}

/** The endpoints of the file that really serve: enabled, and not only kept enabled by the all-disabled fallback. */
export function servingOf(stateDir: string): string[] {
  try {
    const f = JSON.parse(readFileSync(path.join(stateDir, 'gateway-backends.json'), 'utf8')) as { models: { endpoints: Endpoint[] }[] };
    return (f.models[0]?.endpoints ?? []).filter(servingEndpoint).map((e) => e.name);
  } catch {
    return [];
  }
}

/** $stateDir/tunnel.json, or null while there is none. */
export function tunnelHealthOf(stateDir: string): TunnelHealth | null {
  try {
    return JSON.parse(readFileSync(path.join(stateDir, 'tunnel.json'), 'utf8')) as TunnelHealth;
  } catch {
    return null;
  }
}
