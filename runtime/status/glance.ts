/**
 * The cells and lines of the status table that must read right at a glance: memory as "available of total" with the
 * gate only where it matters (before a start), one health word (verdict.ts), a deploy's step n/9 and its wait, one
 * duration format. table.ts lays them out.
 */
import { duration } from '../format.js';
import { estimateWords } from '../vllm/readiness-eta.js';
import type { DeployInProgress, MemoryStatus, NodeStatus } from './types.js';

/** `20 of 128` (GiB): the MEM column. */
export function memoryCell(m: MemoryStatus | null): string {
  if (!m || m.availableGiB === null) return '-';
  return `${m.availableGiB} of ${m.totalGiB ?? '?'}`;
}

/**
 * The memory line: available of total, then the gate. A running server holds its memory, so below the gate is its
 * normal state then and no warning; without a server, below the gate means the next up waits (step 4).
 */
export function memoryText(m: MemoryStatus, serverRunning: boolean): string {
  const head = `${m.availableGiB ?? '?'} GiB available of ${m.totalGiB ?? '?'} GiB, gate ${m.gateGiB} GiB`;
  const gate = serverRunning
    ? ' (the server holds the rest; the gate applies before a start)'
    : m.atGate === false
      ? ' (BELOW the gate: an up would wait for memory)'
      : m.atGate
        ? ' (at the gate: an up can start)'
        : '';
  return `${head}${gate}, watermark_scale_factor ${m.watermarkScaleFactor ?? '?'}`;
}

/** The HEALTH column: the node's one health word, with the HTTP status of a failing server. */
export function healthCell(s: NodeStatus): string {
  if (s.verdict === 'failing') return `failing ${s.health.httpStatus ?? 'no answer'}`;
  if (s.verdict === 'running' && s.health.skipped?.includes('protected')) return 'running (prot.)';
  return s.verdict;
}

/** `7/9 readiness` from the deploy's step and its number. */
function stepOf(d: DeployInProgress): string {
  const n = d.stepIndex !== null && d.stepCount !== null ? `${d.stepIndex}/${d.stepCount} ` : '';
  return `${n}${d.step ?? '?'}`;
}

/** `61%` of a wait's budget, or ''. */
function waitShare(d: DeployInProgress): string {
  const w = d.wait;
  if (!w || !w.timeoutS) return '';
  return `${Math.min(100, Math.floor((w.elapsedS / w.timeoutS) * 100))}%`;
}

/** The DEPLOY column: `up 7/9 readiness 61%`, or who holds the node's lock. */
export function deployCell(s: NodeStatus): string {
  const d = s.deploy;
  if (d) return [d.action ?? '', stepOf(d), waitShare(d)].filter((p) => p !== '').join(' ');
  return s.lock?.live ? `locked: ${s.lock.host}` : '';
}

/** The deploy line: workflow, action, profile, step n/9, time in the deploy and in the wait. The link goes on its own line. */
export function deployText(d: DeployInProgress): string {
  const n = d.stepIndex !== null && d.stepCount !== null ? ` (${d.stepIndex}/${d.stepCount})` : '';
  const parts = [`${d.workflowId} ${d.action ?? ''} ${d.profile ?? ''} step ${d.step ?? '?'}${n}`.replace(/ +/g, ' ')];
  if (d.elapsedS !== null) parts.push(`${duration(d.elapsedS)} in the deploy`);
  if (d.wait) parts.push(`waiting ${duration(d.wait.elapsedS)} of ${duration(d.wait.timeoutS)} (${waitShare(d)})`);
  parts.push(...serverParts(d));
  return parts.join(', ');
}

/** A readiness wait's server phase (or its log's last line) and how long readiness usually takes here (issue 18). */
function serverParts(d: DeployInProgress): string[] {
  const out: string[] = [];
  const w = d.wait;
  if (w?.step === 'readiness') {
    const words = w.phase?.words ?? (w.lastLine ? `log: ${w.lastLine}` : null);
    if (words) out.push(words.replace(/[\x00-\x1f\x7f]/g, ' '));
  }
  const e = d.readinessEstimate ?? w?.estimate ?? null;
  if (e && (d.step === 'readiness' || d.step === 'start')) {
    out.push(e.estimateS === null ? estimateWords(e) : `readiness usually ${estimateWords(e)}`);
  }
  return out;
}
