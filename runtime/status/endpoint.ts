/**
 * Where the gateway sends traffic: each node's endpoint as the gateway backend file says it now
 * (runtime/gateway/gateway.ts writes it; docs/GATEWAY.md), read-only. status shows it in the ENDPOINT column, with
 * the file's reason for a disabled endpoint (or one kept enabled only by the all-disabled fallback).
 */
import { fragmentPath, type GatewayFragment } from '../gateway/gateway.js';
import { readFileOrNull } from '../state/state-files.js';
import type { EndpointStatus } from './types.js';

/** The file's own words for an endpoint the fallback keeps enabled (gateway.ts buildFragment). */
const FALLBACK = 'kept enabled by the fallback';

/** Every node's endpoint in the gateway backend file of `stateDir`, or why there is none to show. */
export function readEndpoints(stateDir: string): { endpoints: Map<string, EndpointStatus>; note: string | null } {
  const file = fragmentPath(stateDir);
  const endpoints = new Map<string, EndpointStatus>();
  let text: string | null;
  try {
    text = readFileOrNull(file);
  } catch (e) {
    return { endpoints, note: `the gateway backend file ${file} cannot be read: ${(e as Error).message}` };
  }
  // No file yet: pulse tells the gateway nothing (ENDPOINT "-"; the detail says `pulse model fragment` writes one).
  if (text === null) return { endpoints, note: null };
  try {
    const eps = (JSON.parse(text) as Partial<GatewayFragment>).models?.[0]?.endpoints;
    if (!Array.isArray(eps)) throw new Error('no models[0].endpoints');
    for (const e of eps) {
      if (typeof e?.name !== 'string') continue;
      const reason = typeof e.reason === 'string' ? e.reason : null;
      const fallback = e.enabled !== false && (reason ?? '').startsWith(FALLBACK);
      endpoints.set(e.name, { enabled: e.enabled !== false, fallback, reason, file });
    }
    return { endpoints, note: null };
  } catch (e) {
    return { endpoints, note: `the gateway backend file ${file} is not valid (${(e as Error).message}); pulse model fragment writes it again` };
  }
}

/** A few words for the ENDPOINT column: why the file disables it, or why only the fallback keeps it (the full reason is in the detail and --json). */
export function endpointWhy(e: EndpointStatus): string {
  const r = (e.reason ?? '').replace(/^kept enabled by the fallback: /, '');
  if (r.startsWith('watchdog')) return 'watchdog';
  if (r.startsWith('state failed')) return 'failed';
  if (r.startsWith('state down')) return 'down';
  if (r.startsWith('state starting')) return 'deploying';
  if (r.startsWith('its state file')) return 'bad state';
  if (r.includes('tunnel')) return 'tunnel';
  if (r.startsWith('the gateway host cannot reach')) return 'loopback';
  return r === '' ? '' : 'see detail';
}
