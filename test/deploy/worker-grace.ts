/**
 * The worker's shutdown grace time in seconds, read from what worker/main.ts exports, so the systemd and compose
 * stop timeouts are checked against the real value and not a copy.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface Grace {
  seconds: number;
  /** Where the value came from: the export's name, or why the assumed default was used. */
  source: string;
}

/** Assumed until worker/main.ts exports its constant (the team's agreed default). */
export const ASSUMED_GRACE_S = 30;

function toSeconds(name: string, value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) {
    return /_?MS$|Ms$/.test(name) ? value / 1000 : value;
  }
  if (typeof value === 'string') {
    const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/.exec(value.trim());
    if (m) return Number(m[1]) * ({ ms: 0.001, s: 1, m: 60 }[m[2] ?? 's'] ?? 1);
  }
  return null;
}

export async function workerGrace(root: string): Promise<Grace> {
  const file = path.join(root, 'dist/worker/main.js');
  if (!existsSync(file)) return { seconds: ASSUMED_GRACE_S, source: `assumed ${ASSUMED_GRACE_S} s: dist/worker/main.js is not built yet` };
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  for (const [name, value] of Object.entries(mod)) {
    if (!/shutdown.?grace/i.test(name)) continue;
    const s = toSeconds(name, value);
    if (s !== null) return { seconds: s, source: `worker/main.ts ${name} = ${String(value)}` };
  }
  return { seconds: ASSUMED_GRACE_S, source: `assumed ${ASSUMED_GRACE_S} s: worker/main.ts exports no SHUTDOWN_GRACE* constant` };
}
