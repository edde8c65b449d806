/** Test helpers for the simulator tests: run a script on a sim node with the real ssh client. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Sim } from '../sim/index.js';
import { RECIPE_NAME } from '../sim/paths.js';
import { loadNodesConfig, nodeOf } from '../../runtime/config/nodes.js';
import { loadProfiles, profileOf } from '../../runtime/config/profiles.js';
import { FORBIDDEN_KEYS, NODE_KEYS } from '../../runtime/config/profile-rules.js';
import { renderEnv as renderProfile } from '../../runtime/plan/render.js';

export interface ShellResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `ssh -F <sim config> <alias> bash -s` with `script` on stdin (async, so the sim's memory timer keeps running). */
export function sshScript(sim: Sim, alias: string, script: string, configPath = sim.sshConfigPath): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('ssh', ['-F', configPath, alias, 'bash', '-s'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(script);
  });
}

/** Polls `check` every 50 ms until it returns true or `ms` passes; returns the last result. */
export async function eventually(check: () => boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/**
 * The .env pulse writes for a node of the sim: the product's renderer (runtime/plan/render.ts) over a shipped profile
 * (default best) and the sim's nodes.json, so a change to how pulse renders reaches these tests. `extra` changes
 * it as pulse would get it: a node key (BIND, PORT...) set on the node, a secret (API_KEY, HF_TOKEN) as the
 * operator's own line at the end (pulse carries it over, never renders it), any other key replaced or added in the
 * profile.
 */
export function renderEnv(sim: Sim, node: string, extra: Record<string, string> = {}, profileName = 'best'): string {
  const file = path.join(sim.dir, `render-${node}-nodes.json`);
  sim.writeNodesJson(file);
  const cfg = nodeOf(loadNodesConfig(file), node);
  const profile = profileOf(loadProfiles(), profileName);
  const isNodeKey = (k: string): boolean => (NODE_KEYS as readonly string[]).includes(k);
  const isSecret = (k: string): boolean => (FORBIDDEN_KEYS as readonly string[]).includes(k);
  const changed = Object.entries(extra).filter(([k]) => !isNodeKey(k) && !isSecret(k));
  const entries = [
    ...profile.entries.map((e) => (extra[e.key] !== undefined && !isNodeKey(e.key) ? { ...e, value: extra[e.key]!, quoted: true } : e)),
    ...changed.filter(([k]) => !profile.entries.some((e) => e.key === k)).map(([key, value]) => ({ key, value, quoted: true, line: 0 })),
  ];
  const env = { ...cfg.env, ...Object.fromEntries(Object.entries(extra).filter(([k]) => isNodeKey(k))) };
  const recipe = cfg.recipes[RECIPE_NAME];
  if (!recipe) throw new Error(`the sim's nodes.json has no ${RECIPE_NAME} recipe for ${node}`);
  const rendered = renderProfile({
    profile: { ...profile, entries }, nodeName: node, node: { ...cfg, env }, recipeName: RECIPE_NAME, recipe, overlay: null, overlayWins: false, now: new Date(),
  });
  const secrets = Object.entries(extra).filter(([k]) => isSecret(k)).map(([k, v]) => `${k}="${v}"\n`);
  return rendered.text + secrets.join('');
}

/** The way pulse starts the recipe: setsid + env -i, detached from the ssh session. */
export function startScript(sim: Sim, node: string): string {
  const r = sim.node(node).recipeDir;
  return `setsid env -i bash ${r}/start.sh >${r}/logs/pulse-up-test.log 2>&1 </dev/null; echo "rc=$?"`;
}
