/**
 * `pulse model status [--node] [--json] [--no-http] [--gpu-probe] [--yes] [--wide] [--watch [interval]]`: asks every
 * node in parallel (one read-only script each) and, only when a Temporal server is configured or already running,
 * which deploy holds each node. It never starts a server and loads the Temporal SDK only in that case. Exit 0 when
 * every node answered and is healthy; 6 when one did not answer; 7 (not-ready) when one is failing, failed or down.
 * With --json even an error is JSON (`{version, error: {kind, exit, message, hint}}`).
 */
import { loadNodesConfig } from '../../runtime/config/nodes.js';
import { isPulseError, PulseError } from '../../runtime/errors.js';
import { EXIT_DETACHED, FAILURES } from '../../runtime/failures.js';
import { resolveNodesPath } from '../../runtime/state/paths.js';
import { trustedStateDir } from '../../runtime/state/state.js';
import { collectStatus, judged, selectNodes, type StatusDeps } from '../../runtime/status/collect.js';
import { renderTable, useColour, WIDTH } from '../../runtime/status/table.js';
import { STATUS_JSON_VERSION } from '../../runtime/status/types.js';
import { utc } from '../../runtime/format.js';
import type { DeployInProgress, StatusReport } from '../../runtime/status/types.js';
import type { DeployProgress } from '../../runtime/model/index.js';
import type { RemoteResult } from '../../runtime/node/types.js';
import type { StatusOptions } from '../options.js';
import type * as TemporalModule from '../deploy-client/temporal.js';

/** How long status waits for Temporal before it shows the nodes without the deploy column. */
const TEMPORAL_WAIT_MS = 8000;

interface DeployLookup {
  deploys: Map<string, DeployInProgress>;
  note: string | null;
}

/** How long the progress query may take: it needs a live worker, and status must not wait for a dead one. */
const QUERY_WAIT_MS = 2000;

async function describeDeploy(conn: TemporalModule.PulseTemporal, node: string, ui: (id: string, run: string) => string | null): Promise<DeployInProgress | null> {
  const { workflowIdFor, PROGRESS_QUERY } = await import('../../workflows/definitions.js');
  const { stepNumber, waitOf } = await import('../deploy-progress.js');
  const id = workflowIdFor(node);
  try {
    const handle = conn.client.workflow.getHandle(id);
    const d = await conn.connection.withDeadline(Date.now() + TEMPORAL_WAIT_MS, () => handle.describe());
    if (d.status.name !== 'RUNNING') return null;
    const p = await conn.connection
      .withDeadline(Date.now() + QUERY_WAIT_MS, () => handle.query<DeployProgress>(PROGRESS_QUERY))
      .catch(() => null);
    const { unservedDeploy } = await import('../deploy-client/presence.js');
    const unserved = await conn.connection.withDeadline(Date.now() + QUERY_WAIT_MS, () => unservedDeploy(conn, d)).catch(() => null);
    const started = p?.startedAt ? Date.parse(p.startedAt) : d.startTime.getTime();
    const attrs = d.typedSearchAttributes;
    const profile = attrs ? (attrs.getAll().find((a) => a.key.name === 'PulseProfile')?.value as string | undefined) : undefined;
    return {
      workflowId: id, runId: d.runId, action: p?.action ?? (d.type === 'downWorkflow' ? 'down' : 'up'), profile: profile ?? null,
      step: p?.step ?? null, ...stepNumber(p), elapsedS: Math.round((Date.now() - started) / 1000), wait: waitOf(d.raw.pendingActivities), uiUrl: ui(id, d.runId), unserved,
      ...(p?.readinessEstimate ? { readinessEstimate: p.readinessEstimate } : {}),
    };
  } catch (e) {
    if ((e as Error)?.name === 'WorkflowNotFoundError') return null;
    throw e;
  }
}

/** Deploys in progress per node, or a note saying why they are not shown. Never starts a Temporal server. */
async function lookupDeploys(nodes: string[], opts: StatusOptions): Promise<DeployLookup> {
  const empty = new Map<string, DeployInProgress>();
  let temporal: typeof TemporalModule;
  try {
    temporal = await import('../deploy-client/temporal.js');
  } catch {
    return { deploys: empty, note: 'deploys in progress are not shown: the Temporal client module is not available' };
  }
  const target = await temporal.configuredOrRunningServer({ temporal: opts.temporal, temporalUi: opts.temporalUi });
  if (!target) return { deploys: empty, note: 'deploys in progress are not shown: no Temporal server is configured or running' };
  const conn = await temporal.connectTo(target);
  try {
    const ui = (id: string, run: string): string | null => temporal.uiLink(target, id, run);
    const found = await Promise.all(nodes.map((n) => describeDeploy(conn, n, ui)));
    return { deploys: new Map(nodes.flatMap((n, i) => (found[i] ? [[n, found[i]] as const] : []))), note: null };
  } finally {
    await conn.close().catch(() => undefined);
  }
}

function timedLookup(nodes: string[], opts: StatusOptions): Promise<DeployLookup> {
  let timer: NodeJS.Timeout | undefined;
  const giveUp = new Promise<DeployLookup>((res) => {
    timer = setTimeout(() => res({ deploys: new Map(), note: `deploys in progress are not shown: Temporal did not answer within ${TEMPORAL_WAIT_MS / 1000} s` }), TEMPORAL_WAIT_MS);
    timer.unref();
  });
  const lookup = lookupDeploys(nodes, opts).catch((e: unknown) => ({
    deploys: new Map<string, DeployInProgress>(),
    note: `deploys in progress are not shown: ${(e as Error)?.message ?? String(e)}`,
  }));
  return Promise.race([lookup, giveUp]).finally(() => clearTimeout(timer));
}

/** One round: every node's status and the deploys holding them, judged; `onPhase` sees each node's progress. */
async function collect(opts: StatusOptions, onPhase?: StatusDeps['onPhase']): Promise<StatusReport> {
  const config = loadNodesConfig(resolveNodesPath(opts.nodes));
  const req = { node: opts.node, http: !opts.noHttp, gpuProbe: opts.gpuProbe, yes: opts.yes, healthRoute: true };
  const names = selectNodes(config, req); // refusals (unknown node, protected --gpu-probe) before any connection
  const { openSession } = await import('../../runtime/node/connect.js');
  const [report, deploys] = await Promise.all([
    collectStatus(config, req, { open: openSession, stateDir: trustedStateDir(), nodeTimeoutMs: nodeTimeoutMs(), onResult: opts.verbose ? printRaw : undefined, onPhase }),
    timedLookup(names, opts),
  ]);
  for (const s of report.nodes) {
    s.deploy = deploys.deploys.get(s.node) ?? null;
    if (s.deploy?.unserved) s.warnings.push(`deploy running, ${s.deploy.unserved} — start \`pulse worker\` (or \`pulse model watch --node ${s.node}\`, which provides one)`);
  }
  if (deploys.note) report.notes.push(deploys.note);
  return judged(report); // a deploy in progress turns "failing" into "deploying"
}

/** The exit code of a report: 6 when a node did not answer, 7 when one is not healthy, else 0. */
export function exitOf(report: StatusReport): number {
  if (!report.allAnswered) return FAILURES.unreachable.exit;
  return report.allHealthy ? 0 : FAILURES['not-ready'].exit;
}

/** Run status; prints the table or --json (an error too, as JSON, with --json); the exit code says whether every node answered and is healthy. */
export async function run(opts: StatusOptions): Promise<number> {
  try {
    if (opts.watchS !== undefined) return await watchRounds(opts, opts.watchS);
    const report = await collectShowingWait(opts);
    process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : text(report, opts));
    // A node that never finished its ssh handshake leaves a connect pending (ssh2's own timeout is longer than
    // status's); status only reads, so nothing is left to wait for: end now rather than when that connect gives up.
    setTimeout(() => process.exit(), 100).unref();
    return exitOf(report);
  } catch (e) {
    if (!opts.json) throw e;
    process.stdout.write(`${JSON.stringify(jsonError(e), null, 2)}\n`);
    return jsonError(e).error.exit;
  }
}

/** One round with, on a terminal (not --json), a live line naming the nodes still waited for (cli/status-wait.ts). */
async function collectShowingWait(opts: StatusOptions): Promise<StatusReport> {
  if (opts.json || !process.stdout.isTTY) return collect(opts);
  const { StatusWait } = await import('../status-wait.js');
  const wait = new StatusWait(process.stdout, TEMPORAL_WAIT_MS);
  try {
    return await collect(opts, wait.onPhase);
  } finally {
    wait.end();
  }
}

/** What `status --json` prints instead of a report when it cannot make one (docs/STATUS.md). */
export function jsonError(e: unknown): { version: typeof STATUS_JSON_VERSION; error: { kind: string; exit: number; message: string; hint: string | null } } {
  const kind = isPulseError(e) ? e.kind : 'internal';
  const message = e instanceof Error ? e.message : String(e);
  return { version: STATUS_JSON_VERSION, error: { kind, exit: FAILURES[kind].exit, message, hint: isPulseError(e) ? (e.hint ?? null) : null } };
}

/** Columns to fit: the terminal's (it follows a resize), else $COLUMNS, else the table's default. */
export function widthOf(out: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = process.env): number {
  if (out.isTTY && out.columns && out.columns > 0) return out.columns;
  const c = Number(env['COLUMNS']);
  return Number.isInteger(c) && c > 0 ? c : WIDTH;
}

function text(report: StatusReport, opts: StatusOptions): string {
  return renderTable(report, { colour: useColour(process.stdout), width: widthOf(process.stdout), detail: opts.wide === true || opts.node !== undefined });
}

/**
 * --watch: a round every `everyS` seconds until Ctrl-C (or SIGTERM). On a terminal each round redraws the last one in
 * place (the cursor goes back up over it); off a terminal each round is printed after the last, a table under a
 * `status at <time>` line, --json one compact report per line (JSON Lines). A round that fails prints its error and
 * the next round tries again. Ends with the last round's exit code.
 */
async function watchRounds(opts: StatusOptions, everyS: number): Promise<number> {
  if (opts.gpuProbe) throw new PulseError('usage', '--watch with --gpu-probe would start a GPU container every round; probe once, without --watch');
  const out = process.stdout;
  const tty = Boolean(out.isTTY) && !opts.json;
  let last: number | null = null;
  let shown = '';
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((res) => (stop = res));
  let ending = false;
  const end = (): void => {
    ending = true;
    stop();
  };
  process.on('SIGINT', end);
  process.on('SIGTERM', end);
  try {
    while (!ending) {
      const at = new Date();
      let body: string;
      try {
        const report = await Promise.race([collect(opts), stopped.then(() => null)]);
        if (report === null) break;
        last = exitOf(report);
        body = opts.json ? `${JSON.stringify(report)}\n` : text(report, opts);
      } catch (e) {
        if (e instanceof PulseError && (e.kind === 'usage' || e.kind === 'config' || e.kind === 'refused')) throw e;
        last = isPulseError(e) ? FAILURES[e.kind].exit : FAILURES.internal.exit;
        body = opts.json ? `${JSON.stringify(jsonError(e))}\n` : `pulse: ${(e as Error)?.message ?? String(e)}\n`;
      }
      if (ending) break;
      const head = opts.json ? '' : `every ${everyS}s: pulse model status${opts.node ? ` --node ${opts.node}` : ''} at ${utc(at)}${tty ? ' (Ctrl-C ends)' : ''}\n`;
      if (tty) {
        const width = widthOf(out);
        const frame = `${head}${body}`;
        // The cursor can go back up over the last frame only while it is all on screen; a taller one (--wide on a
        // small terminal) is redrawn from the top of a cleared screen instead, as watch(1) does.
        const tall = out.rows !== undefined && out.rows > 0 && (rowsOf(shown, width) >= out.rows || rowsOf(frame, width) >= out.rows);
        const back = shown === '' ? '' : tall ? '\u001b[H\u001b[2J' : `\u001b[${rowsOf(shown, width)}A\r\u001b[J`;
        out.write(`${back}${frame}`);
        shown = frame;
      } else out.write(`${head}${body}${opts.json ? '' : '\n'}`);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([stopped, new Promise((res) => (timer = setTimeout(res, everyS * 1000)))]);
      clearTimeout(timer);
    }
  } finally {
    process.off('SIGINT', end);
    process.off('SIGTERM', end);
  }
  // A round cut short by Ctrl-C leaves its ssh sessions to their timeouts: do not wait for them (status only reads).
  if (ending) setTimeout(() => process.exit(), 200).unref();
  return last ?? EXIT_DETACHED;
}

/** The terminal rows `text` takes at `width` columns (a line longer than the width wraps). */
function rowsOf(text: string, width: number): number {
  return text
    .replace(/\n$/, '')
    .split('\n')
    .reduce((n, l) => n + Math.max(1, Math.ceil(Array.from(l.replace(/\u001b\[[0-9;]*m/g, '')).length / width)), 0);
}

/** $PULSE_STATUS_TIMEOUT_S: how long status waits for one node (default 45 s). */
function nodeTimeoutMs(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env['PULSE_STATUS_TIMEOUT_S'];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new PulseError('usage', `PULSE_STATUS_TIMEOUT_S must be a positive number of seconds, got "${raw}"`);
  return n * 1000;
}

/** --verbose: the raw records of each node script, on stderr so --json stays parseable. */
function printRaw(result: RemoteResult): void {
  for (const line of result.rawRecords) process.stderr.write(`${result.node}: ${line}\n`);
}
