/**
 * The human form of a StatusReport, kubectl-style: the fleet table (one row per node, columns sized to their values
 * and to the terminal's width), under it one line per node that is not healthy or whose endpoint is not simply
 * enabled (why, with the strongest signal), the notes; the per-node detail blocks only when asked (--node, --wide).
 * Every line fits the width (a long value is cut with … or wrapped at a space, never mid-word) except a link, which
 * is never cut; colour only when asked (a TTY without NO_COLOR).
 */
import { duration, utc } from '../format.js';
import { deployCell, deployText, healthCell, healthWhy, kvCell, memoryCell, memoryText, nextCommand, profileCell } from './glance.js';
import { endpointWhy } from './endpoint.js';
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

/**
 * Wrap `text` at spaces into lines of at most `width` columns, continuation lines indented by `indent`; the first
 * line keeps its own leading spaces. A word longer than a line is cut with … (never broken across two lines).
 */
export function wrap(text: string, indent: number, width = WIDTH): string[] {
  const lead = /^ */.exec(text)?.[0] ?? '';
  const out: string[] = [];
  let line = lead;
  for (const word of text.slice(lead.length).split(' ')) {
    const next = line.trim() === '' ? `${line}${word}` : `${line} ${word}`;
    if (next.length > width && line.trim() !== '') {
      out.push(line);
      line = `${' '.repeat(indent)}${word}`;
    } else line = next;
  }
  out.push(line);
  return out.map((l) => fit(l, width));
}

/** One column of the fleet table: its header and its cell, each with a short form for a narrow terminal. */
interface Column {
  header: string;
  shortHeader?: string;
  cell: (s: NodeStatus, short: boolean) => string;
  /** A column the spec does not require (RUNTIME.md: container, profile, drift, health, KV cache, memory): dropped first. */
  optional?: boolean;
}

const COLUMNS: Record<string, Column> = {
  node: { header: 'NODE', cell: (s) => s.node },
  health: { header: 'HEALTH', cell: (s, short) => healthCell(s, short) },
  endpoint: { header: 'ENDPOINT', cell: endpointCell },
  container: { header: 'CONTAINER', cell: (s) => (s.answered ? (s.container ? (s.container.exists ? s.container.state : s.dockerDown ? 'docker down' : 'none') : '-') : '?') },
  profile: { header: 'PROFILE', cell: profileCell },
  drift: { header: 'DRIFT', cell: (s) => (s.env?.drift ? 'DRIFT' : s.env?.renderedByPulse ? 'ok' : '-') },
  kv: { header: 'KV CACHE', shortHeader: 'KV', cell: (s, short) => (s.answered ? kvCell(s, short) : '-') },
  memory: { header: 'AVAIL GiB', shortHeader: 'GiB', cell: (s, short) => memoryCell(s.memory, short) },
  last: { header: 'LAST', cell: (s) => s.lastDeploy?.state ?? 'none', optional: true },
  deploy: { header: 'DEPLOY', cell: (s, short) => deployCell(s, short) },
};
/** Left to right. */
const ORDER = ['node', 'health', 'endpoint', 'container', 'profile', 'drift', 'kv', 'memory', 'last', 'deploy'];
/** Which columns take their short form first when the table is wider than the terminal. */
const SHRINK = ['profile', 'memory', 'kv', 'endpoint', 'deploy', 'health'];
const GAP = '  ';

/** The ENDPOINT cell: `enabled`, `disabled: watchdog` (short `disabled`), `fallback`, or `-` when the file does not say. */
function endpointCell(s: NodeStatus, short: boolean): string {
  const e = s.endpoint;
  if (!e) return '-';
  if (e.enabled && !e.fallback) return 'enabled';
  const word = e.fallback ? 'fallback' : 'disabled';
  const why = endpointWhy(e);
  return short || why === '' ? word : `${word}: ${why}`;
}

/**
 * The table's lines (header first), columns sized to their values, in the short forms and without LAST as `width`
 * needs; and which columns took their short form.
 */
function fleetRows(nodes: NodeStatus[], width: number): { lines: string[]; short: ReadonlySet<string> } {
  const short = new Set<string>();
  const dropped = new Set<string>();
  const build = (): string[][] => {
    const keys = ORDER.filter((k) => !dropped.has(k));
    const grid = [keys.map((k) => (short.has(k) ? (COLUMNS[k]?.shortHeader ?? COLUMNS[k]?.header) : COLUMNS[k]?.header) ?? '')];
    for (const s of nodes) grid.push(keys.map((k) => COLUMNS[k]?.cell(s, short.has(k)) ?? ''));
    // A column with no value in any row (DEPLOY when nothing deploys) takes no room.
    const empty = keys.map((_, i) => grid.slice(1).every((r) => r[i] === ''));
    return grid.map((r) => r.filter((_, i) => !empty[i]));
  };
  const total = (grid: string[][]): number => {
    const widths = (grid[0] ?? []).map((_, i) => Math.max(...grid.map((r) => (r[i] ?? '').length)));
    return widths.reduce((a, b) => a + b, 0) + GAP.length * Math.max(0, widths.length - 1);
  };
  let grid = build();
  for (const k of SHRINK) {
    if (total(grid) <= width) break;
    short.add(k);
    grid = build();
  }
  for (const k of ORDER.filter((c) => COLUMNS[c]?.optional)) {
    if (total(grid) <= width) break;
    dropped.add(k);
    grid = build();
  }
  const widths = (grid[0] ?? []).map((_, i) => Math.max(...grid.map((r) => (r[i] ?? '').length)));
  return { lines: grid.map((r) => fit(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join(GAP).trimEnd(), width)), short };
}

/**
 * The lines under the table for one node: why it is not healthy, its endpoint's reason when the row could not show it
 * (a narrow table) or the node is not healthy, its warnings.
 */
function whyLines(s: NodeStatus, endpointShown: boolean): string[] {
  const out: string[] = [];
  const why = healthWhy(s);
  if (why !== null) out.push(`${s.verdict}: ${why.replace(/^unreachable: /, '')}`);
  const e = s.endpoint;
  // The endpoint's reason once: a watchdog's or a failed state's reason is already in the health line above it.
  const said = e?.reason ? (why ?? '').includes(e.reason.replace(/^kept enabled by the fallback: /, '')) || (why ?? '').includes(s.lastDeploy?.error ?? '\u0000') && /^state failed/.test(e.reason) : false;
  if (endpointShown && s.healthy && !e?.fallback) {
    // the ENDPOINT cell already says why (`disabled: loopback`)
  } else if (e?.fallback) {
    // RUNTIME.md: with no endpoint that can be enabled, the first node stays enabled, with a warning
    out.push(said ? 'warning: endpoint kept enabled by the fallback: the gateway rejects a model with no enabled endpoint' : `warning: endpoint ${e.reason ?? 'kept enabled by the fallback'} (the gateway rejects a model with no enabled endpoint)`);
  } else if (e && !e.enabled) out.push(said ? 'endpoint disabled (the reason above)' : `endpoint disabled: ${e.reason ?? 'no reason given'}`);
  // a server that died under a state that still says up: the file keeps its endpoint, and the gateway sends it traffic
  else if (e?.enabled && s.verdict === 'down') out.push('warning: endpoint enabled: the gateway still sends it traffic and no server answers (its node state still says up)');
  const next = nextCommand(s);
  if (next) out.push(`next: ${next}`);
  // --gpu-probe over the fleet: its result under the table (the fleet rows have no column for it)
  const g = s.gpuProbe;
  if (g) out.push(`gpu probe ${g.ran ? `exit ${g.exitCode}: ${g.line ?? probeLine(g.output, g.exitCode) ?? ''}` : `skipped: ${g.skipped ?? ''}`}`);
  const w = s.warnings;
  if (w.length > 0) out.push(`warning: ${w[0]}${w.length > 1 ? ` (+${w.length - 1} more: --node ${s.node})` : ''}`);
  return out;
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
    const route = h.healthRoute === undefined ? '' : `, /health ${h.healthRoute || 'no answer'}`;
    out.push(['health', h.checked ? `HTTP ${h.httpStatus ?? 'none'} ${h.servedModels.join(',') || '(no model)'} max_model_len ${h.maxModelLen ?? '?'}${route}${h.detail ? ` (${h.detail})` : ''}` : (h.skipped ?? '')]);
  }
  const why = healthWhy(s);
  if (why !== null && s.answered) out.push(['verdict', `${s.verdict}: ${why}`]);
  const next = nextCommand(s);
  if (next) out.push(['next', next]);
  const ep = s.endpoint;
  out.push(['endpoint', ep ? (ep.fallback ? `enabled only by the fallback: ${ep.reason ?? ''}` : ep.enabled ? 'enabled: the gateway sends it traffic' : `disabled: ${ep.reason ?? 'no reason given'}`) : 'not in a gateway backend file (pulse model fragment writes one from the node states)']);
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

export interface TableOptions {
  colour: boolean;
  now?: Date;
  /** Columns to fit (the terminal's, else $COLUMNS, else WIDTH). */
  width?: number;
  /** Each node's detail block under the table (--node, --wide); without it one line per node that needs a look. */
  detail?: boolean;
}

/** Render the report for people. */
export function renderTable(report: StatusReport, opts: TableOptions): string {
  const paint: Paint = (t, tone) => (opts.colour ? `\u001b[${CODES[tone]}m${t}\u001b[0m` : t);
  const now = opts.now ?? new Date();
  const width = Math.max(40, opts.width ?? WIDTH);
  const table = fleetRows(report.nodes, width);
  const [header = '', ...rows] = table.lines;
  const endpointShown = !table.short.has('endpoint');
  const lines = [paint(header, 'dim')];
  report.nodes.forEach((s, i) => {
    const row = rows[i] ?? '';
    lines.push(!s.healthy ? paint(row, 'bad') : s.warnings.length || s.endpoint?.fallback ? paint(row, 'warn') : row);
  });
  if (!opts.detail) {
    const pad = Math.max(...report.nodes.map((s) => s.node.length)) + GAP.length;
    const why = report.nodes.flatMap((s) => whyLines(s, endpointShown).map((l, i) => ({ s, text: `${i === 0 ? s.node.padEnd(pad) : ' '.repeat(pad)}${l}` })));
    if (why.length > 0) lines.push('');
    for (const w of why) {
      const wrapped = wrap(w.text, pad, width);
      lines.push(...wrapped.map((l) => (!w.s.healthy ? paint(l, 'bad') : paint(l, 'warn'))));
    }
  }
  for (const s of opts.detail ? report.nodes : []) {
    lines.push('', paint(fit(`${s.node}${s.protected ? ' (protected)' : ''}${s.recipe ? `  recipe ${s.recipe}` : ''}`, width), s.answered ? 'ok' : 'bad'));
    for (const [k, v] of detailLines(s, now)) {
      if (k === LINK) {
        lines.push(`  ${'ui'.padEnd(10)} ${v}`); // a link is never cut or wrapped: it must stay copyable
        continue;
      }
      const wrapped = wrap(`  ${k.padEnd(10)} ${v}`, 13, width);
      lines.push(...(k === 'warning' || k === 'error' ? wrapped.map((l) => paint(l, k === 'error' ? 'bad' : 'warn')) : wrapped));
    }
  }
  if (report.notes.length > 0) lines.push('');
  for (const n of report.notes) lines.push(...wrap(`note: ${n}`, 6, width));
  if (!opts.detail) lines.push(paint(fit(`detail: pulse model status --node <node>, or --wide for every node`, width), 'dim'));
  return `${lines.join('\n')}\n`;
}
