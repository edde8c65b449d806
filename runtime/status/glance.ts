/**
 * The cells and lines of the status table that must read right at a glance: memory as "available of total" with the
 * gate only where it matters (before a start), one health word (verdict.ts), a deploy's step n/9 and its wait, one
 * duration format. table.ts lays them out.
 */
import { duration, utc } from '../format.js';
import { saysCancelled } from '../failures.js';
import { answersHealthy, watchdogAgainst } from './verdict.js';
import { estimateWords } from '../vllm/readiness-eta.js';
import type { DeployInProgress, MemoryStatus, NodeStatus } from './types.js';

/** `20 of 128` (GiB): the AVAIL GiB column; `20/128` short. */
export function memoryCell(m: MemoryStatus | null, short = false): string {
  if (!m || m.availableGiB === null) return '-';
  return short ? `${m.availableGiB}/${m.totalGiB ?? '?'}` : `${m.availableGiB} of ${m.totalGiB ?? '?'}`;
}

/** `1.16M tok` (the KV cache size in tokens): the KV CACHE column; `1.16M` short; `-` without a KV cache line. */
export function kvCell(s: Pick<NodeStatus, 'kvCache'>, short = false): string {
  const t = s.kvCache.tokens;
  if (t === null) return s.kvCache.line ? '?' : '-';
  const n = t >= 1e6 ? `${(t / 1e6).toFixed(t >= 1e7 ? 1 : 2)}M` : t >= 1e3 ? `${Math.round(t / 1e3)}k` : String(t);
  return short ? n : `${n} tok`;
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

/** The HEALTH column: the node's one health word; the long form adds what made a node failing (or a running one unprobed). */
export function healthCell(s: NodeStatus, short = false): string {
  if (short) return s.verdict;
  if (s.verdict === 'failing') return `failing: ${failingCause(s)}`;
  if (s.verdict === 'running' && s.health.skipped) return 'running (no HTTP)';
  return s.verdict;
}

/** What made a running node failing, in a few words: `/health 503`, `watchdog`, `HTTP 500`, `no answer`. */
function failingCause(s: NodeStatus): string {
  const h = s.health;
  if (h.checked && h.httpStatus === 200 && h.healthRoute !== undefined && h.healthRoute !== 200) return `/health ${h.healthRoute || 'no answer'}`;
  if (watchdogAgainst(s) !== null && (!h.checked || h.modelsOk)) return 'watchdog';
  if (h.httpStatus === 200 && !h.modelsOk) return 'no model';
  return h.httpStatus === null ? 'no answer' : `HTTP ${h.httpStatus}`;
}

/**
 * Why a node is not healthy, in one sentence for the line under the table (the full signal: the error, /health's
 * answer, the node state's error, the watchdog's reason), or null for a healthy node.
 */
export function healthWhy(s: NodeStatus): string | null {
  const h = s.health;
  const c = s.container;
  switch (s.verdict) {
    case 'unreachable':
      return s.error ?? 'the node did not answer';
    case 'failing': {
      const wd = watchdogAgainst(s);
      if (h.checked && h.modelsOk && h.healthRoute !== undefined && h.healthRoute !== 200) return h.detail ?? `GET /health answered ${h.healthRoute}`;
      if (wd !== null && (!h.checked || h.modelsOk)) return `the watchdog holds it down: ${wd}`;
      const answer = h.httpStatus === null ? 'no answer' : `HTTP ${h.httpStatus}`;
      const state = c && c.state !== 'running' ? ` (container ${c.state})` : '';
      return `/v1/models: ${answer}${h.detail ? ` (${h.detail})` : ''}${state}`;
    }
    case 'failed': {
      const l = s.lastDeploy;
      // a cancel after the stop began marks the node failed too; its word stays "cancelled", as history and the exit say
      const ended = saysCancelled(l?.error) ? 'was cancelled' : 'failed';
      const head = l ? `last ${l.action}${l.profile ? ` ${l.profile}` : ''} ${ended} at ${utc(l.at)}${l.error ? `: ${l.error}` : ''}` : 'the last deploy failed';
      return answersHealthy(h) ? `${head}; a server answers, but pulse does not count a failed node as serving` : head;
    }
    case 'down': {
      if (!c?.exists && s.dockerDown) return `the last up left a server here; docker does not answer: ${s.dockerDown}`;
      if (!c?.exists) return `the last up left a server here; container ${c?.name ?? '?'} is gone`;
      return `the last up left a server here; container ${c.name} is ${c.state}${c.exitMeaning ? ` (${c.exitMeaning})` : ''}`;
    }
    default:
      return null;
  }
}

/**
 * The next command for a node that is down or failed, as the failure block of an up gives one: the log that says
 * why, then the way back (an up of the profile that ran for a server that died; a rollback, dry-run first since it
 * picks the .env, for a failed deploy). Null for every other node.
 */
export function nextCommand(s: NodeStatus): string | null {
  const yes = s.protected ? ' --yes' : '';
  if (s.verdict === 'down') {
    const profile = s.lastDeploy?.profile ?? s.env?.profile ?? '<profile>';
    const up = `pulse model up ${profile} --node ${s.node}${yes}`;
    return s.container?.exists ? `pulse model logs --node ${s.node} (why it stopped), then ${up}` : up;
  }
  if (s.verdict === 'failed') return `pulse model logs --node ${s.node} --deploy (the failed start), then pulse model rollback --node ${s.node} --dry-run`;
  return null;
}

/**
 * The PROFILE column: the profile that runs. Without a running container the .env's profile is only what the next
 * start would run, and says so: `best (.env; not running)`, short `best (.env)`.
 */
export function profileCell(s: NodeStatus, short = false): string {
  const e = s.env;
  if (!e?.profile) return e?.exists ? '(not pulse)' : '-';
  const c = s.container;
  const stopped = s.answered && c !== null && !c.running && c.state !== 'unknown';
  return stopped ? `${e.profile} (.env${short ? '' : '; not running'})` : e.profile;
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

/** The DEPLOY column: `up 7/9 readiness 61%` (short: `up 7/9 61%`), or who holds the node's lock. */
export function deployCell(s: NodeStatus, short = false): string {
  const d = s.deploy;
  if (d) {
    const n = d.stepIndex !== null && d.stepCount !== null ? `${d.stepIndex}/${d.stepCount}` : (d.step ?? '?');
    return [d.action ?? '', short ? n : stepOf(d), waitShare(d)].filter((p) => p !== '').join(' ');
  }
  return s.lock?.live ? (short ? 'locked' : `locked: ${s.lock.host}`) : '';
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
