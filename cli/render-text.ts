/** Text printers of the local-only commands (profiles, up --dry-run). Pure: data in, text out. */
import type { PreflightReport, UpPlan } from '../runtime/model/index.js';
import { UP_STEPS } from '../runtime/steps/catalog.js';

/** One profile line of `pulse model profiles`. */
export interface ProfileRow {
  name: string;
  recipe: string;
  status: string;
  runnable: boolean;
  description: string;
}

/** One node line of `pulse model profiles`. */
export interface NodeRow {
  name: string;
  host: string;
  ssh: string | null;
  protected: boolean;
  gatewayUrl: string;
}

/** Rows as columns: each cell but the last padded to its column's widest, two spaces apart, no trailing blanks. */
export function table(rows: string[][]): string[] {
  const widths = rows.reduce<number[]>((w, r) => r.map((c, i) => Math.max(w[i] ?? 0, c.length)), []);
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd());
}

/** The text of `pulse model profiles`. */
export function profilesText(profiles: ProfileRow[], nodes: NodeRow[]): string {
  const p = table([
    ['PROFILE', 'RECIPE', 'STATUS', 'RUNNABLE', 'DESCRIPTION'],
    ...profiles.map((r) => [r.name, r.recipe, r.status, r.runnable ? 'yes' : 'render-only', r.description]),
  ]);
  const n = table([
    ['NODE', 'HOST', 'SSH', 'PROTECTED', 'GATEWAY URL'],
    ...nodes.map((r) => [r.name, r.host, r.ssh ?? '-', r.protected ? 'yes' : 'no', r.gatewayUrl]),
  ]);
  return `${p.join('\n')}\n\n${n.join('\n')}\n`;
}

function section(title: string, body: string): string {
  return `==== ${title} ====\n${body.endsWith('\n') || body === '' ? body : `${body}\n`}\n`;
}

/** The first line of the dry-run: what it would do where, and that it does nothing. */
export function planHeadline(plan: UpPlan): string {
  const t = plan.target;
  const where = t.host === 'ssh' ? `ssh ${t.ssh ?? ''}` : 'local';
  return `dry-run: up ${plan.profile} on ${plan.node} (${where}); nothing runs on any node and no file is written\n\n`;
}

/** What the up would write and check: the rendered .env, the overlay's replacements, the directories, the proofs. */
export function planFilesText(plan: UpPlan): string {
  let out = section(`rendered .env -> ${plan.env.path}`, plan.env.text);
  if (plan.replacements.length > 0) out += section('overlay replacements (--overlay-wins)', plan.replacements.join('\n'));
  if (plan.mkdirs.length > 0) out += section('pulse-mkdir', plan.mkdirs.join('\n'));
  if (plan.proofs.length > 0) out += section('pulse-proof (must occur in the container log)', plan.proofs.join('\n'));
  return out;
}

/**
 * The step scripts: the shared prelude once, then each step's own part (its libraries, inputs and body, with one
 * marker line where the prelude goes). Every step sends the prelude first, so printing it once per step made the
 * dry-run ten copies of the same 450 lines around the parts a reader wants to check.
 */
export function stepsText(prelude: string, steps: { step: string; title: string; own: string }[]): string {
  const head = section(`shared prelude: runtime/scripts/prelude.sh, sent first in every step's script below (${lineCount(prelude)} lines)`, prelude);
  return head + steps.map((s) => section(`step ${s.title} [${s.step}]`, s.own)).join('');
}

/**
 * The plan's summary, last so it is on the screen when the dry-run ends: target, gates, restart rule, the steps in
 * order, the availability warning, the refusals a real up would meet, the client notes.
 */
export function planSummaryText(plan: UpPlan, runnable: boolean, steps: { step: string; title: string }[], warning: string | null): string {
  const lines = [
    planHeadline(plan).trimEnd(),
    `recipe: ${plan.recipe.name} in ${plan.recipe.dir} (container ${plan.recipe.container})`,
    `memory gate: ${plan.memory.gateGiB} GiB MemAvailable, wait up to ${plan.memory.timeoutS} s`,
    `readiness: wait up to ${plan.readiness.timeoutS} s for /v1/models on ${plan.expect.bind}:${plan.expect.port}`,
    `restart: ${plan.restart ? 'always (--restart)' : 'only when the identity or a mounted file changed'}`,
    `steps: ${[...steps.map((s) => s.step), UP_STEPS.publish.step].join(', ')}`,
  ];
  if (warning) lines.push(`availability: ${warning}`);
  if (plan.protected) lines.push(`protected node: a real up needs --yes${plan.confirmed ? ' (given)' : ''}`);
  if (!runnable) lines.push(`render-only profile (pulse-runnable: false): a real up refuses it`);
  for (const n of plan.clientNotes) lines.push(`NOTE: ${n}`);
  return section('summary', lines.join('\n'));
}

const lineCount = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** Step 9 runs on this host, not on the node: what it writes and how it sees the fleet. */
export function publishText(plan: UpPlan): string {
  const lines = [
    `nodes/${plan.node}.json and gateway-backends.json in $PULSE_STATE_DIR (on this host, no node script)`,
    ...plan.fleet.map((f) => `  endpoint ${f.node}: ${f.gatewayUrl}${f.reachable ? '' : ' (unreachable from the gateway host: loopback BIND, stays disabled)'}`),
  ];
  if (plan.rollbackHint) lines.push(`on failure, back to the previous profile: ${plan.rollbackHint}`);
  return section(`step ${UP_STEPS.publish.plan} [${UP_STEPS.publish.step}]`, lines.join('\n'));
}

/** The findings of `--dry-run --preflight`. */
export function preflightText(r: PreflightReport): string {
  const lines = r.checks.map((c) => `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
  lines.push(`.env diff: ${r.diff.added.length} added, ${r.diff.removed.length} removed, ${r.diff.changed.length} changed`);
  for (const k of r.diff.added) lines.push(`  + ${k}`);
  for (const k of r.diff.removed) lines.push(`  - ${k}`);
  for (const k of r.diff.changed) lines.push(`  ~ ${k}`);
  lines.push(`open client connections: ${r.openConnections}`);
  if (r.otherVllmContainers.length > 0) lines.push(`other vLLM containers: ${r.otherVllmContainers.join(', ')}`);
  if (r.sameIdentityRunning) lines.push('the same .env already runs: up would do only steps 1, 7, 8 and 9');
  if (r.restartReason) lines.push(`restart needed: ${r.restartReason}`);
  lines.push(r.ok ? 'preflight: ok' : 'preflight: FAILED (a real up would stop here, before any change)');
  return section('preflight (read-only, ran on the node)', lines.join('\n'));
}
