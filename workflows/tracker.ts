/**
 * Step bookkeeping of one deploy, in workflow code: the `progress` query, the UI's current details and the
 * DeployResult's step list all come from here. Time is the workflow clock (deterministic on replay).
 */
import { defineQuery, setCurrentDetails, setHandler } from '@temporalio/workflow';
import { noteOf } from '../runtime/steps/catalog.js';
import type { StepDef } from '../runtime/steps/catalog.js';
import { PROGRESS_QUERY } from './definitions.js';
import type { DeployProgress, DeployResult, ReadinessEstimate, StepRecord } from '../runtime/model/index.js';

/** Answers the deploy's live step list; see DeployProgress. */
export const progressQuery = defineQuery<DeployProgress>(PROGRESS_QUERY);

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export class StepTracker {
  private readonly records: StepRecord[] = [];
  private readonly started = Date.now();
  private current: StepRecord | null = null;
  private done = false;
  /** How long readiness usually takes here, from the 'starting' state step (issue 18); shown with the readiness step. */
  private estimate: ReadinessEstimate | null = null;

  constructor(
    private readonly node: string,
    private readonly action: 'up' | 'down',
  ) {
    setHandler(progressQuery, () => this.progress());
  }

  /**
   * Runs one catalog step: records its start, end and outcome (with the step's note on its result), and shows it as
   * the workflow's current details.
   */
  async run<T>(def: StepDef, fn: () => Promise<T>): Promise<T> {
    const rec: StepRecord = { step: def.step, title: def.title, state: 'running', startedAt: iso(Date.now()), ms: null };
    const { title } = def;
    this.records.push(rec);
    this.current = rec;
    const usual = def.step === 'readiness' && this.estimate ? `; ${estimateText(this.estimate)}` : '';
    this.details(`**${title}** (${this.action} on ${this.node}) since ${rec.startedAt}${usual}`);
    try {
      const r = await fn();
      rec.state = 'ok';
      const n = noteOf(def, r);
      if (n !== null) rec.note = n;
      return r;
    } catch (err) {
      rec.state = 'failed';
      throw err;
    } finally {
      rec.ms = Date.now() - Date.parse(rec.startedAt);
      this.current = null;
    }
  }

  /** The readiness estimate of this start (the 'starting' state step's answer; older workers give none). */
  setReadinessEstimate(e: ReadinessEstimate | undefined): void {
    if (e && typeof e === 'object' && (e.estimateS === null || typeof e.estimateS === 'number')) this.estimate = e;
  }

  /** The readiness estimate of this start, if the 'starting' state step gave one. */
  readinessEstimate(): ReadinessEstimate | null {
    return this.estimate ? { ...this.estimate } : null;
  }

  /** How long a finished step took by the workflow clock (the readiness wait, for the next estimate), or null. */
  msOf(step: string): number | null {
    return this.records.filter((r) => r.step === step && r.state === 'ok').at(-1)?.ms ?? null;
  }

  /** Whether the step was begun (it may still run, have failed or been cancelled). */
  began(step: string): boolean {
    return this.records.some((r) => r.step === step);
  }

  /** The step that failed last (for the "<step>: <error>" message), if any. */
  failedStep(): string | null {
    const failed = this.records.filter((r) => r.state === 'failed');
    return failed.length > 0 ? (failed[failed.length - 1]?.step ?? null) : null;
  }

  finish(summary: string): void {
    this.done = true;
    this.details(summary);
  }

  progress(): DeployProgress {
    return {
      node: this.node,
      action: this.action,
      step: this.current?.step ?? null,
      startedAt: iso(this.started),
      steps: this.records.map((r) => ({ ...r })),
      done: this.done,
      ...(this.estimate ? { readinessEstimate: { ...this.estimate } } : {}),
    };
  }

  resultSteps(): DeployResult['steps'] {
    return this.records.map((r) => ({ step: r.step, ok: r.state === 'ok', ms: r.ms ?? 0, ...(r.note ? { note: r.note } : {}) }));
  }

  private details(text: string): void {
    // Current details (SDK >= 1.12) are shown on the workflow page of the UI; not part of history.
    setCurrentDetails(text);
  }
}

/** `usually ~15 min here (5 earlier starts)`; the CLI words it itself (runtime/vllm/readiness-eta.ts, not in the bundle). */
function estimateText(e: ReadinessEstimate): string {
  if (e.estimateS === null) return 'first start of this profile here';
  const m = Math.max(1, Math.round(e.estimateS / 60));
  return `usually ~${m} min here (${e.samples} earlier start${e.samples === 1 ? '' : 's'} of this ${e.basis === 'identity' ? '.env' : 'profile'})`;
}
