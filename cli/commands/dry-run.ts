/**
 * `pulse model up <profile> --node <node> --dry-run [--preflight] [--json]`: builds the plan exactly as a real up
 * would and prints it with the full script of each step. It runs nothing and writes nothing; only --preflight
 * opens a session to run the read-only step 1 (ssh2 is loaded lazily for that case only).
 */
import { loadInputs, profileOf } from '../../runtime/config/index.js';
import { buildUpPlan, checkRefusals } from '../../runtime/plan/plan.js';
import { stepScripts } from '../../runtime/steps/index.js';
import { readScript } from '../../runtime/node/script.js';
import type { PreflightReport, UpPlan } from '../../runtime/model/index.js';
import { FAILURES } from '../../runtime/failures.js';
import type { UpOptions } from '../options.js';
import { planFilesText, planHeadline, planSummaryText, preflightText, publishText, stepsText } from '../render-text.js';

/** The plan of the dry-run (the same builder and refusals a real up uses, with dryRun relaxing the two it shows). */
export function dryRunPlan(opts: UpOptions, now: Date = new Date()): { plan: UpPlan; runnable: boolean } {
  const { config, profiles, overlay } = loadInputs({ nodes: opts.nodes, overlay: opts.overlay });
  const plan = buildUpPlan(
    config,
    profiles,
    {
      profile: opts.profile,
      node: opts.node,
      overlay,
      overlayWins: opts.overlayWins,
      yes: opts.yes,
      experimental: opts.experimental,
      restart: opts.restart,
      timeoutS: opts.timeoutS,
      minMemGib: opts.minMemGib,
    },
    now,
  );
  const profile = profileOf(profiles, opts.profile);
  checkRefusals(plan, profile, { experimental: opts.experimental, dryRun: true });
  return { plan, runnable: profile.runnable };
}

/** Run only step 1 (read-only) on the node: the node layer and ssh2 load here, never for a plain dry-run. */
async function preflight(plan: UpPlan): Promise<PreflightReport & { dockerDown: boolean }> {
  const { openSession } = await import('../../runtime/node/connect.js');
  const { previewPreflight } = await import('../../runtime/steps/index.js');
  const session = await openSession(plan.target);
  try {
    return await previewPreflight(session, plan);
  } finally {
    await session.close();
  }
}

/** Print the plan (text or --json); with --preflight also the node's findings (exit 5 when they fail). */
export async function run(opts: UpOptions): Promise<number> {
  const { plan, runnable } = dryRunPlan(opts);
  const report = opts.preflight ? await preflight(plan) : null;
  // a daemon that does not answer is the more specific cause (exit 14); any other failed check is a precondition (5)
  const code = report === null || report.ok ? 0 : report.dockerDown ? FAILURES['docker-down'].exit : FAILURES.precondition.exit;
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(report ? { plan, preflight: report } : plan, null, 2)}\n`);
    return code;
  }
  const { outageWarning } = await import('../outage-warning.js');
  // The gateway file's word alone (its line says so): RUNTIME.md's dry-run runs nothing on a node but step 1's reads.
  const warning = await outageWarning(opts, 'up', false);
  const steps = stepScripts(plan);
  process.stdout.write(planHeadline(plan));
  process.stdout.write(planFilesText(plan));
  process.stdout.write(stepsText(readScript('prelude'), steps));
  process.stdout.write(publishText(plan));
  if (report) process.stdout.write(preflightText(report));
  process.stdout.write(planSummaryText(plan, runnable, steps, warning));
  return code;
}
