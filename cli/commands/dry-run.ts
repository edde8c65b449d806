/**
 * `pulse model up <profile> --node <node> --dry-run [--preflight] [--json]`: builds the plan exactly as a real up
 * would and prints it with the full script of each step. It runs nothing and writes nothing; only --preflight
 * opens a session to run the read-only step 1 (ssh2 is loaded lazily for that case only).
 */
import { loadInputs, profileOf } from '../../runtime/config/index.js';
import { buildUpPlan, checkRefusals } from '../../runtime/plan.js';
import { stepScripts } from '../../runtime/steps/index.js';
import type { UpPlan } from '../../workflows/types.js';
import type { UpOptions } from '../options.js';
import { clientNotesText, planText, preflightText, stepsText } from '../render-text.js';

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

async function preflight(plan: UpPlan): Promise<string> {
  const { openSession } = await import('../../runtime/node/connect.js');
  const { runPreflight } = await import('../../runtime/steps/index.js');
  const session = await openSession(plan.target);
  try {
    return preflightText(await runPreflight(session, plan));
  } finally {
    await session.close();
  }
}

/** Print the plan (text or --json); with --preflight also the node's read-only findings. */
export async function run(opts: UpOptions): Promise<number> {
  const { plan, runnable } = dryRunPlan(opts);
  if (opts.json && !opts.preflight) {
    process.stdout.write(`${JSON.stringify(plan, null, 2)}\n`);
    return 0;
  }
  if (opts.json) {
    const { openSession } = await import('../../runtime/node/connect.js');
    const { runPreflight } = await import('../../runtime/steps/index.js');
    const session = await openSession(plan.target);
    try {
      const report = await runPreflight(session, plan);
      process.stdout.write(`${JSON.stringify({ plan, preflight: report }, null, 2)}\n`);
      return report.ok ? 0 : 5;
    } finally {
      await session.close();
    }
  }
  process.stdout.write(planText(plan, runnable));
  process.stdout.write(stepsText(stepScripts(plan)));
  if (opts.preflight) process.stdout.write(await preflight(plan));
  process.stdout.write(clientNotesText(plan.clientNotes));
  return 0;
}
