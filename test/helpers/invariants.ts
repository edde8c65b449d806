/**
 * What must hold on a node and in the state dir after every deploy of the fault suite, whatever the fault:
 * at most one start.sh per deploy, a .env that is either the old file or a complete render (its body matches its
 * own pulse-sha256 header), a backup that is byte-for-byte the old .env, a valid node state file and gateway file,
 * and a state that agrees with how the deploy ended.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { envBodySha256, parseEnvHeader } from '../../runtime/plan/render.js';
import { readNodeStateSync } from '../../runtime/state/state.js';
import { loadNodesConfig } from '../../runtime/config/index.js';
import { fleetOf } from '../../runtime/plan/plan.js';
import type { Outcome, Stack } from './stack.js';

/** What the checks compare against: the node before the deploy. */
export interface Before {
  node: string;
  env: string | null;
  startCalls: number;
}

export function snapshot(stack: Stack, node: string): Before {
  const n = stack.sim.node(node);
  return { node, env: existsSync(n.envPath) ? readFileSync(n.envPath, 'utf8') : null, startCalls: n.startShCalls().length };
}

/** A .env that pulse wrote completely: a pulse header whose sha256 is the body's. */
export function completeRender(text: string): boolean {
  const h = parseEnvHeader(text);
  return h !== null && h.sha256 === envBodySha256(text);
}

interface GatewayFile {
  models: { endpoints: { name: string; enabled: boolean }[] }[];
}

/** The problems found (empty when every invariant holds). `envNow` overrides reading the .env (disk-full case). */
export function violations(stack: Stack, before: Before, out: Outcome, envNow?: string): string[] {
  const v: string[] = [];
  const n = stack.sim.node(before.node);
  const starts = n.startShCalls().length - before.startCalls;
  if (starts > 1) v.push(`start.sh ran ${starts} times`);
  const env = envNow ?? (existsSync(n.envPath) ? readFileSync(n.envPath, 'utf8') : null);
  if (env !== before.env && !(env !== null && completeRender(env))) v.push('the .env is neither the old file nor a complete render (half-written)');
  const backup = out.result?.backupPath;
  if (backup) {
    if (!existsSync(backup)) v.push(`backup ${backup} is missing (lost backup)`);
    else if (before.env !== null && readFileSync(backup, 'utf8') !== before.env) v.push(`backup ${backup} differs from the old .env`);
  }
  let state = null;
  try {
    state = readNodeStateSync(stack.stateDir, before.node);
  } catch (e) {
    v.push(`node state file invalid: ${(e as Error).message}`);
  }
  let endpoint: { enabled: boolean } | undefined;
  const gw = path.join(stack.stateDir, 'gateway-backends.json');
  if (existsSync(gw)) {
    try {
      const g = JSON.parse(readFileSync(gw, 'utf8')) as GatewayFile;
      endpoint = g.models[0]?.endpoints.find((e) => e.name === before.node);
    } catch (e) {
      v.push(`gateway file invalid: ${(e as Error).message}`);
    }
  }
  if (existsSync(gw) && endpoint === undefined) v.push('the gateway file has no endpoint for the node');
  // Only the gateway node is reachable in the sim fleet (BIND 127.0.0.1); the others' endpoints stay disabled.
  const reachable = fleetOf(loadNodesConfig(stack.nodesFile)).find((f) => f.node === before.node)?.reachable ?? false;
  if (out.status === 'succeeded') {
    const want = out.result?.action === 'down' ? 'down' : 'up';
    if (state?.state !== want) v.push(`${out.result?.action ?? 'up'} succeeded but the node state is ${state?.state ?? 'missing'}`);
    if (want === 'up' && reachable && endpoint?.enabled !== true) v.push('succeeded but the endpoint is not enabled');
  }
  if (out.status === 'failed-compensated') {
    if (state?.state !== 'failed') v.push(`compensated but the node state is ${state?.state ?? 'missing'}`);
  }
  if (out.status === 'failed-uncompensated') v.push(`failed without compensation: ${out.error ?? ''}`);
  return v;
}
