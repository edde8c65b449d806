/**
 * What `pulse model diff` finds and how it reads (cli/commands/diff.ts runs it; a rollout's dry-run shows it per
 * node): old → new of every key where the profile, rendered for the node as up would render it, differs from the
 * node's running .env, read-only through status.sh (no HTTP; secret lines masked on the node).
 */
import { loadInputs, nodeOf, type NodeConfig } from '../runtime/config/index.js';
import { parseEnvHeader } from '../runtime/config/env-header.js';
import { diffEnv, type KeyDifference } from '../runtime/plan/env-diff.js';
import { failureOf } from '../runtime/node/outcome.js';
import { buildUpPlan } from '../runtime/plan/plan.js';
import { targetOf } from '../runtime/config/nodes.js';
import { statusInputs } from '../runtime/status/collect.js';
import { utc } from '../runtime/format.js';
import type { DiffOptions } from './options.js';
import { plainText } from './live-line.js';

/** What diff found: the data `--json` prints and the text printer renders. */
export interface DiffReport {
  node: string;
  profile: string;
  envPath: string;
  /** The running .env's pulse header (null: no .env, or one pulse did not render). */
  running: { exists: boolean; profile: string | null; rendered: string | null };
  same: boolean;
  differences: KeyDifference[];
  secretLines: number;
}

/** The node's .env text of one recipe (secret lines masked on the node), or null when it has none. */
async function runningEnv(name: string, node: NodeConfig, recipe: string): Promise<string | null> {
  const { NodePool } = await import('../runtime/node/connect.js');
  const pool = new NodePool();
  try {
    const result = await pool.session(targetOf(name, node)).run('status', { env: statusInputs(node, false) });
    const failed = failureOf(result);
    if (failed) throw failed;
    const rec = result.records.find((r) => r.kind === 'env' && r['recipe'] === recipe);
    if (!rec || rec['exists'] !== true || typeof rec['text_b64'] !== 'string') return null;
    return Buffer.from(rec['text_b64'], 'base64').toString('utf8');
  } finally {
    await pool.closeAll();
  }
}

export async function diffReport(opts: DiffOptions): Promise<DiffReport> {
  const { config, profiles, overlay } = loadInputs({ nodes: opts.nodes, overlay: opts.overlay });
  const plan = buildUpPlan(config, profiles, { profile: opts.profile, node: opts.node, overlay, overlayWins: opts.overlayWins, yes: true, restart: false }, new Date());
  const text = await runningEnv(opts.node, nodeOf(config, opts.node), plan.recipe.name);
  const header = text === null ? null : parseEnvHeader(text);
  const { differences, secretLines } = diffEnv(text, plan.env.values);
  return {
    node: opts.node, profile: opts.profile, envPath: plan.env.path,
    running: { exists: text !== null, profile: header?.profile ?? null, rendered: header ? utc(header.rendered) : null },
    same: differences.length === 0, differences, secretLines,
  };
}

const value = (v: string | null): string => (v === null ? '(unset)' : plainText(v));

/** The text of a diff: where, then one entry per key (on two lines when the values are long), then the verdict. */
export function diffText(r: DiffReport): string {
  const what = !r.running.exists ? 'no .env there' : r.running.profile ? `running profile ${r.running.profile}, rendered ${r.running.rendered}` : 'a .env pulse did not render';
  const lines = [`diff ${r.profile} → ${r.node}: ${r.envPath} (${what})`];
  const w = Math.max(0, ...r.differences.map((d) => d.key.length));
  for (const d of r.differences) {
    const one = `  ${d.key.padEnd(w)}  ${value(d.old)} → ${value(d.new)}`;
    if (one.length <= 100) lines.push(one);
    else lines.push(`  ${d.key}`, `    - ${value(d.old)}`, `    + ${value(d.new)}`);
  }
  const secrets = r.secretLines > 0 ? `; ${r.secretLines} secret line(s) (API_KEY/HF_TOKEN) not shown: up carries them over as they are` : '';
  lines.push(r.same ? `same: the running .env has every value of ${r.profile}${secrets}` : `${r.differences.length} key(s) differ${secrets}`);
  return `${lines.join('\n')}\n`;
}

