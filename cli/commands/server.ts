/**
 * `pulse server status|stop`: the embedded default's two processes as the operator sees them, without reading pids
 * out of JSON files (issue 30, also expected). The embedded Temporal dev server (cli/deploy-client/embedded-server.ts)
 * and the background worker beside it (background-worker.ts), each trusted only as those modules trust them (the
 * state dir the operator's own, a pid of the same user that is still that program); the open deploys and watchdog
 * schedules that keep the worker; and a clean stop that refuses while either exists unless --force, and says what
 * stopping means. Against a configured server (TEMPORAL_ADDRESS, --temporal) there is nothing pulse runs to manage.
 */
import { lstatSync } from 'node:fs';
import { PulseError } from '../../runtime/errors.js';
import { duration, utc } from '../../runtime/format.js';
import type { GlobalOptions } from '../options.js';
import type { BackgroundWorkerInfo } from '../deploy-client/background-worker.js';
import type { EmbeddedServer } from '../deploy-client/embedded-server.js';
import type { PulseTemporal, ServerTarget } from '../deploy-client/temporal.js';

export interface ServerOptions extends GlobalOptions {
  verb: 'status' | 'stop';
  /** stop: also while a deploy is open or a watchdog schedule exists. */
  force: boolean;
}

/** What keeps the background worker (and so the server) busy: the nodes of the open deploys and of the watchdog schedules. */
interface Busy {
  deploys: string[];
  watchdogs: string[];
}

interface Report {
  stateDir: string;
  server: (EmbeddedServer & { uiUrl: string; dbBytes: number | null }) | null;
  worker: (Omit<BackgroundWorkerInfo, 'idleS'> & { idleS: number | null }) | null;
  busy: Busy | null;
}

function out(opts: ServerOptions, json: unknown, lines: string[]): void {
  process.stdout.write(opts.json ? `${JSON.stringify(json, null, 2)}\n` : `${lines.join('\n')}\n`);
}

function sizeOf(file: string): number | null {
  try {
    return lstatSync(file).size;
  } catch {
    return null;
  }
}

function bytes(n: number | null): string {
  if (n === null) return 'missing';
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

function since(at: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(at)) / 1000));
  return `${utc(at)} (${duration(s)} ago)`;
}

/** The nodes of the watchdog schedules (`pulse model watchdog on`), by schedule ID. */
async function watchdogNodes(t: PulseTemporal): Promise<string[]> {
  const { watchdogScheduleId } = await import('../../runtime/fleet/watchdog.js');
  const prefix = watchdogScheduleId('');
  const nodes: string[] = [];
  for await (const s of t.client.schedule.list()) if (s.scheduleId.startsWith(prefix)) nodes.push(s.scheduleId.slice(prefix.length));
  return nodes.sort();
}

/** Asks the running embedded server what is open; it never starts one (the target is the one that runs). */
async function busyOf(target: ServerTarget): Promise<Busy> {
  const { connectTo } = await import('../deploy-client/temporal.js');
  const { openDeployNodes } = await import('../deploy-client/presence.js');
  const t = await connectTo(target);
  try {
    return { deploys: await openDeployNodes(t, 50), watchdogs: await watchdogNodes(t) };
  } finally {
    await t.close();
  }
}

/** The configured server, or null when pulse uses its embedded one. */
function configuredAddress(opts: ServerOptions): string | null {
  return opts.temporal || process.env['TEMPORAL_ADDRESS'] || null;
}

async function report(): Promise<Report> {
  const { stateDir } = await import('../deploy-client/temporal.js');
  const { runningEmbeddedServer } = await import('../deploy-client/embedded-server.js');
  const { liveBackgroundWorker } = await import('../deploy-client/background-worker.js');
  const dir = stateDir(); // refused when another user owns or can write it
  const server = await runningEmbeddedServer(dir);
  const w = await liveBackgroundWorker(dir);
  const worker = w ? { ...w, idleS: w.idleS ?? null } : null;
  if (!server) return { stateDir: dir, server: null, worker, busy: null };
  const target: ServerTarget = { address: server.address, namespace: process.env['TEMPORAL_NAMESPACE'] || 'default', tls: undefined, apiKey: undefined, embedded: server, uiBase: `http://${server.ip}:${server.uiPort}` };
  return {
    stateDir: dir,
    server: { ...server, uiUrl: `http://${server.ip}:${server.uiPort}`, dbBytes: sizeOf(server.dbFile) },
    worker,
    busy: await busyOf(target),
  };
}

function busyLines(b: Busy): string[] {
  const lines: string[] = [];
  lines.push(b.deploys.length === 0 ? 'open deploys: none' : `open deploys: ${b.deploys.length} (${b.deploys.join(', ')})`);
  lines.push(b.watchdogs.length === 0 ? 'watchdog schedules: none' : `watchdog schedules: ${b.watchdogs.length} (${b.watchdogs.join(', ')})`);
  return lines;
}

function workerLines(r: Report, now: number): string[] {
  const w = r.worker;
  if (!w) return ['background worker: not running (up, down, rollback, watch and watchdog on start one when they need it)'];
  const idle = w.idleS === null ? 'its idle limit is not recorded (a worker from before it was)' : `exits after ${duration(w.idleS)} with no deploy open and no watchdog schedule (PULSE_WORKER_IDLE_S)`;
  const kept = r.busy && (r.busy.deploys.length > 0 || r.busy.watchdogs.length > 0) ? '; kept now by the deploys and schedules below' : '';
  return [
    `background worker: running, pid ${w.pid}, since ${since(w.startedAt, now)}`,
    `  build:     ${w.buildId}`,
    `  idle exit: ${idle}${kept}`,
    `  log:       ${w.logFile}`,
  ];
}

function statusLines(r: Report, now: number): string[] {
  const s = r.server;
  if (!s) {
    return [
      `embedded Temporal server: not running (state dir ${r.stateDir})`,
      '  the next up, down, rollback, watch or watchdog command starts it; open deploys resume then',
      ...workerLines(r, now),
    ];
  }
  return [
    `embedded Temporal server: running, pid ${s.pid}, since ${since(s.startedAt, now)}`,
    `  address:   ${s.address}`,
    `  Web UI:    ${s.uiUrl}`,
    `  database:  ${s.dbFile} (${bytes(s.dbBytes)})`,
    `  log:       ${s.logFile}`,
    ...workerLines(r, now),
    ...(r.busy ? busyLines(r.busy) : []),
  ];
}

/** What stopping means for each open deploy and watchdog schedule: said before (a refusal) and after (--force). */
function meaning(b: Busy): string[] {
  return [
    ...b.deploys.map((n) => `the deploy on ${n} pauses where it is: it is durable in the server's database and resumes when pulse next starts the server and its worker (pulse model watch --node ${n})`),
    ...b.watchdogs.map((n) => `the watchdog of ${n} stops checking until the server and a worker run again (its schedule stays)`),
  ];
}

function noEmbedded(opts: ServerOptions, address: string): number {
  const line = `pulse uses the Temporal server at ${address} (${address === process.env['TEMPORAL_ADDRESS'] ? 'TEMPORAL_ADDRESS' : '--temporal'}): there is no embedded server to manage; that server and its workers are run by whoever runs them (docs/PRODUCTION.md)`;
  out(opts, { embedded: false, address }, [line]);
  return 0;
}

async function status(opts: ServerOptions): Promise<number> {
  const r = await report();
  out(opts, { embedded: true, ...r, running: r.server !== null }, statusLines(r, Date.now()));
  return 0;
}

async function stop(opts: ServerOptions): Promise<number> {
  const r = await report();
  const busy = r.busy ?? { deploys: [], watchdogs: [] };
  const open = busy.deploys.length + busy.watchdogs.length;
  if (r.server && open > 0 && !opts.force) {
    const what = [busy.deploys.length > 0 ? `${busy.deploys.length} deploy(s) open (${busy.deploys.join(', ')})` : '', busy.watchdogs.length > 0 ? `${busy.watchdogs.length} watchdog schedule(s) (${busy.watchdogs.join(', ')})` : ''].filter((x) => x !== '');
    throw new PulseError('refused', `the embedded Temporal server has ${what.join(' and ')}: not stopping it. Stopping now means: ${meaning(busy).join('; ')}`, {
      hint: 'wait until the deploys end (pulse model watch --node N) or turn the watchdogs off (pulse model watchdog off --node N); or stop anyway with `pulse server stop --force`',
    });
  }
  const { stopEmbeddedServer } = await import('../deploy-client/embedded-server.js');
  const stopped = await stopEmbeddedServer(r.stateDir);
  const lines: string[] = [];
  lines.push(stopped.worker !== null ? `stopped the background worker (pid ${stopped.worker})` : 'no background worker ran');
  lines.push(stopped.server !== null ? `stopped the embedded Temporal server (pid ${stopped.server}); its database stays: ${r.server?.dbFile ?? ''}` : `no embedded Temporal server ran (state dir ${r.stateDir})`);
  if (stopped.server !== null && open > 0) lines.push(...meaning(busy));
  if (stopped.server !== null) lines.push('the next up, down, rollback, watch or watchdog command starts it again');
  out(opts, { embedded: true, stopped, paused: stopped.server !== null ? busy : { deploys: [], watchdogs: [] } }, lines);
  return 0;
}

export async function run(opts: ServerOptions): Promise<number> {
  const address = configuredAddress(opts);
  if (address) return noEmbedded(opts, address);
  return opts.verb === 'status' ? status(opts) : stop(opts);
}
