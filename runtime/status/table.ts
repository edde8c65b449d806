/**
 * The human form of a StatusReport: a one-row-per-node summary, then one block per node. Every line fits
 * WIDTH columns (long values are cut with …) except a link, which is never cut; colour only when asked (a TTY
 * without NO_COLOR).
 */
import { duration, utc } from '../format.js';
import { deployCell, deployText, healthCell, memoryCell, memoryText } from './glance.js';
import type { ContainerStatus, NodeStatus, StatusReport } from './types.js';
import { watchdogLine } from '../fleet/watchdog.js';
import { probeLine } from './probe.js';

/** The detail key of a link line: printed whole, the one kind of line that may pass WIDTH. */
const LINK = 'ui';

export const WIDTH = 100;

type Paint = (text: string, tone: 'ok' | 'bad' | 'warn' | 'dim') => string;
const CODES = { ok: 32, bad: 31, warn: 33, dim: 2 } as const;

/** Colour when stdout is a TTY and NO_COLOR is unset or empty (https://no-color.org). */
export function useColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env['NO_COLOR'];
}

/** Cut `text` to `width` columns. */
export function fit(text: string, width = WIDTH): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** Wrap `text` at spaces into lines of at most `width` columns, continuation lines indented by `indent`. */
export function wrap(text: string, indent: number, width = WIDTH): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line === '' ? word : `${line} ${word}`;
    if (next.length > width && line.trim() !== '') {
      out.push(line);
      line = `${' '.repeat(indent)}${word}`;
    } else line = next;
  }
  out.push(line);
  return out.map((l) => fit(l, width));
}

function cell(text: string, width: number): string {
  return fit(text, width).padEnd(width);
}

function summaryRow(s: NodeStatus): string {
  const container = s.answered ? (s.container ? (s.container.exists ? s.container.state : s.dockerDown ? 'docker down' : 'none') : '-') : 'UNREACHABLE';
  const profile = s.env?.profile ?? (s.env?.exists ? '(not pulse)' : '-');
  const drift = s.env?.drift ? 'DRIFT' : s.env?.renderedByPulse ? 'ok' : '-';
  const last = s.lastDeploy ? s.lastDeploy.state : 'none';
  return [cell(s.node, 10), cell(container, 12), cell(profile, 10), cell(drift, 6), cell(healthCell(s), 15), cell(memoryCell(s.memory), 10), cell(last, 9), fit(deployCell(s), 22)].join(' ');
}

function age(iso: string | null, now: Date): string {
  if (!iso) return '';
  const s = (now.getTime() - Date.parse(iso)) / 1000;
  return Number.isFinite(s) ? `${duration(s)} ago` : '';
}

function detailLines(s: NodeStatus, now: Date): [string, string][] {
  const out: [string, string][] = [];
  if (!s.answered) out.push(['error', s.error ?? 'no answer']);
  const c = s.container;
  if (c) out.push(['container', containerText(c, s.dockerDown ?? null, now)]);
  if (c?.logs) out.push(['logs', c.logs.summary]);
  const e = s.env;
  if (e) {
    const id = e.renderedByPulse ? `${e.profile} on ${e.node}, recipe ${e.recipe}, overlay ${e.overlay}, rendered ${e.rendered}` : e.exists ? 'no pulse header' : 'missing';
    out.push(['.env', `${e.drift ? 'DRIFT: edited after render; ' : ''}${id} ${e.path}`]);
  }
  const h = s.health;
  if (s.answered || h.skipped) {
    out.push(['health', h.checked ? `HTTP ${h.httpStatus ?? 'none'} ${h.servedModels.join(',') || '(no model)'} max_model_len ${h.maxModelLen ?? '?'}${h.detail ? ` (${h.detail})` : ''}` : (h.skipped ?? '')]);
  }
  const kv = s.kvCache.line?.replace(/^.*?(GPU KV cache size)/, '$1') ?? null;
  if (s.answered) out.push(['kv cache', kv ? `${kv}${s.kvCache.source === 'state' ? ' (saved by up: not in the log\'s last lines)' : ''}` : 'none']);
  const m = s.memory;
  if (m) out.push(['memory', memoryText(m, s.container?.running ?? false)]);
  if (s.answered) out.push(['gpu procs', s.gpuProcesses === null ? 'nvidia-smi did not answer' : s.gpuProcesses.length ? s.gpuProcesses.map((p) => `${p.pid ?? '?'} ${p.name} ${p.usedMiB ?? '?'} MiB`).join('; ') + ' (information only)' : 'none listed (information only)']);
  const l = s.lastDeploy;
  out.push(['last', l ? `${l.action} ${l.profile ?? ''} → ${l.state} at ${utc(l.at)}${l.error ? `: ${l.error}` : ''}` : 'no saved state']);
  const good = s.lastKnownGood;
  if (good) out.push(['last good', `${good.profile} (sha256 ${good.identity.sha256.slice(0, 12)}) verified at ${utc(good.at)}, ${good.backupPath ? `kept in ${good.backupPath}` : 'the live .env'}`]);
  if (s.watchdog) out.push(['watchdog', watchdogLine(s.watchdog, now)]);
  if (s.deploy) out.push(['deploy', deployText(s.deploy)]);
  if (s.deploy?.uiUrl) out.push([LINK, s.deploy.uiUrl]);
  const t = s.tunnel;
  if (t) out.push(['tunnel', t.up ? `up: ${t.url} (connected since ${utc(t.connectedSince)}, ${t.reconnects} reconnect(s))` : `down: ${t.url}: ${t.reason ?? ''}`]);
  const lk = lockLine(s);
  if (lk) out.push(['lock', lk]);
  const g = s.gpuProbe;
  if (g) out.push(['gpu probe', g.ran ? `exit ${g.exitCode}: ${g.line ?? probeLine(g.output, g.exitCode) ?? ''}` : `skipped: ${g.skipped}`]);
  for (const w of s.warnings) out.push(['warning', w]);
  return out;
}

/**
 * The container line: its state since the time that state began (StartedAt while it runs, FinishedAt once it
 * exited), never docker's zero time; a container that never started says so, with State.Error. A daemon that does
 * not answer is said so, never "no such container".
 */
export function containerText(c: ContainerStatus, dockerDown: string | null, now: Date): string {
  if (!c.exists) return c.state === 'unknown' && dockerDown ? `${c.name}: unknown (${dockerDown})` : `${c.name}: no such container`;
  const ended = c.state === 'exited' || c.state === 'dead';
  const at = ended ? c.finishedAt : c.state === 'created' ? null : c.startedAt;
  const since = at ? ` since ${utc(at)} (${age(at, now)})` : c.state === 'created' && !c.startedAt ? ', never started' : '';
  return `${c.name} ${c.state}${since}, image ${c.image ?? '?'}${containerExtra(c)}`;
}

/** The last exit, the restarts and State.Error of a container that is not simply running, as docker's fields say. */
function containerExtra(c: ContainerStatus): string {
  const parts = [
    c.exitMeaning, c.restartCount ? `restarted ${c.restartCount} time(s) by its restart policy` : null,
    c.error ? `error: ${c.error}` : null,
  ].filter((p) => p);
  return parts.length ? `; ${parts.join('; ')}` : '';
}

/** Who holds the node's deploy lock, in one line (the same holder fields a refused deploy names). */
function lockLine(s: NodeStatus): string | null {
  const l = s.lock;
  if (!l) return null;
  const who = `deploy ${l.deployId} from controller ${l.host} (${l.action})`;
  if (l.state === 'released') return `free (last: ${who}, released ${utc(l.leaseUntil)})`;
  if (l.corrupt) return `${l.corrupt} (not honoured: the next deploy clears it)`;
  if (l.live) return `held by ${who} since ${utc(l.since)}, lease until ${utc(l.leaseUntil)}`;
  return `stale: ${who} since ${utc(l.since)}, lease ran out ${utc(l.leaseUntil)} (the next deploy takes it)`;
}

/** Render the report for people. */
export function renderTable(report: StatusReport, opts: { colour: boolean; now?: Date }): string {
  const paint: Paint = (t, tone) => (opts.colour ? `\u001b[${CODES[tone]}m${t}\u001b[0m` : t);
  const now = opts.now ?? new Date();
  const header = [cell('NODE', 10), cell('CONTAINER', 12), cell('PROFILE', 10), cell('DRIFT', 6), cell('HEALTH', 15), cell('AVAIL GiB', 10), cell('LAST', 9), 'DEPLOY'].join(' ');
  const lines = [paint(fit(header), 'dim')];
  for (const s of report.nodes) {
    const row = fit(summaryRow(s));
    lines.push(!s.answered ? paint(row, 'bad') : !s.healthy ? paint(row, 'bad') : s.warnings.length ? paint(row, 'warn') : row);
  }
  for (const s of report.nodes) {
    lines.push('', paint(fit(`${s.node}${s.protected ? ' (protected)' : ''}${s.recipe ? `  recipe ${s.recipe}` : ''}`), s.answered ? 'ok' : 'bad'));
    for (const [k, v] of detailLines(s, now)) {
      if (k === LINK) {
        lines.push(`  ${'ui'.padEnd(10)} ${v}`); // a link is never cut or wrapped: it must stay copyable
        continue;
      }
      const wrapped = wrap(`  ${k.padEnd(10)} ${v}`, 13);
      lines.push(...(k === 'warning' || k === 'error' ? wrapped.map((l) => paint(l, k === 'error' ? 'bad' : 'warn')) : wrapped));
    }
  }
  for (const n of report.notes) lines.push('', ...wrap(`note: ${n}`, 6));
  return `${lines.join('\n')}\n`;
}
