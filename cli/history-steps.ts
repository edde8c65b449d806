/**
 * `pulse model history --steps [ID]`: one deploy's steps as the live follow printed them (each step, how long it
 * took, what it said or why it failed) and how it ended, read from its history on the Temporal server, so a 3 a.m.
 * look needs no Web UI (issue 30, "also expected"). The events are read by the follow's own reader
 * (deploy-client/follow-run.ts replayHistory): one home for what a history event means.
 */
import type { Client } from '@temporalio/client';
import { duration } from '../runtime/format.js';
import { replayHistory, type HistoryEventLike, type StepSink } from './deploy-client/follow-run.js';
import { plainText } from './live-line.js';
import type { StepOutcome } from './progress-printer.js';

export interface StepLine {
  name: string;
  outcome: StepOutcome;
  seconds: number;
  message: string | null;
}

/** The steps of one run and how it ended (null while it runs). */
export interface DeploySteps {
  steps: StepLine[];
  started: string[];
  end: { status: string; error: string | null } | null;
}

/** Reads a run's history and tells it to a sink that keeps each step's end (and the steps still running). */
export async function deploySteps(client: Client, workflowId: string, runId?: string): Promise<DeploySteps> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const steps: StepLine[] = [];
  const open: string[] = [];
  const sink: StepSink = {
    stepStarted: (name) => void open.push(name),
    stepEnded: (name, outcome, ms, message) => {
      const i = open.indexOf(name);
      if (i >= 0) open.splice(i, 1);
      steps.push({ name, outcome, seconds: ms / 1000, message });
    },
    rawRecords: () => undefined,
    readinessEstimate: () => undefined,
  };
  const outcome = replayHistory((history.events ?? []) as HistoryEventLike[], sink);
  const end = outcome?.kind === 'closed' ? { status: outcome.status, error: outcome.error } : null;
  return { steps, started: open, end };
}

/** The steps as lines: `✓ 1/9 preflight on spark2 (0.4s): 12 checks passed`, then the end. */
export function stepsText(what: string, d: DeploySteps): string {
  const lines = [what];
  for (const s of d.steps) {
    const mark = s.outcome === 'ok' ? '✓' : s.outcome === 'warned' ? '!' : '✗';
    const word = s.outcome === 'ok' || s.outcome === 'warned' ? '' : `: ${s.outcome}`;
    lines.push(`  ${mark} ${plainText(s.name)} (${duration(s.seconds, { tenths: true })})${word}${s.message ? `: ${plainText(s.message)}` : ''}`);
  }
  for (const name of d.started) lines.push(`  → ${plainText(name)} (running)`);
  if (d.end === null) lines.push('  running');
  else lines.push(`  ${d.end.status}${d.end.error ? `: ${plainText(d.end.error)}` : ''}`);
  return `${lines.join('\n')}\n`;
}
