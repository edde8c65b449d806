/**
 * One markdown table of the latest figures in bench/results/*.json (for bench/README.md "Latest figures", its one home).
 *
 * Run: node dist/bench/summary.js (or `speed`: the issue 17 table, bench/speed.sh)
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, runMain } from './lib.js';

type Json = Record<string, unknown>;

function load(name: string): Json | null {
  const f = path.join(ROOT, 'bench', 'results', `${name}.json`);
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as Json) : null;
}

function rows(j: Json | null): Json[] {
  return (j?.['rows'] as Json[] | undefined) ?? [];
}

function met(ok: unknown): string {
  return ok === true ? 'met' : ok === false ? 'NOT met' : '-';
}

/** The issue 17 table: each of its figures from the latest results, with the run that measured it (bench/speed.sh). */
function speedTable(): string {
  const out = ['| figure | issue 17 (before) | this run | goal | result |', '|---|---|---|---|---|'];
  const runs = new Set<string>();
  const add = (j: Json | null, what: string, before: string, figure: string, goal: string, ok: unknown): void => {
    if (!j) return;
    runs.add(String(j['run'] ?? `(no run id: ${String(j['at'])})`));
    out.push(`| ${what} | ${before} | ${figure} | ${goal} | ${met(ok)} |`);
  };
  const o = load('overhead');
  const ov = (prefix: string): Json | undefined => rows(o).find((r) => String(r['path']).startsWith(prefix));
  const full = ov('full up (9');
  const same = ov('same identity');
  if (full) add(o, 'full up vs the same node scripts back to back, no Temporal', '1.56×', `${String(full['ratio'])}× (${String(full['temporalMs'])} vs ${String(full['floorMs'])} ms)`, '≤ 1.15×', full['met']);
  if (same) add(o, 'same-identity up vs its floor', '1.10×', `${String(same['ratio'])}× (${String(same['temporalMs'])} vs ${String(same['floorMs'])} ms)`, '≤ 1.05×', same['met']);
  const l = load('readiness-lag');
  add(l, "readiness noticed: the server's first 200 → verify starts", 'median 714 ms', `median ${String(l?.['medianMs'])} ms, max ${String(l?.['maxMs'])} ms`, 'median ≤ 100 ms, max ≤ 250 ms', l?.['met']);
  const rec = load('recovery');
  add(rec, 'worker SIGKILLed during readiness → the poll again on another worker', '31 s', `median ${String(rec?.['medianResumeS'])} s (${rows(rec).map((r) => String(r['resumeS'])).join(', ')}); start.sh runs ${rows(rec).map((r) => String(r['startShRuns'])).join(', ')}`, '≤ 8 s, one start.sh', rec?.['met']);
  const term = load('recovery-sigterm');
  add(term, 'worker SIGTERMed (graceful) during readiness → the poll again elsewhere', '(not in the issue)', `median ${String(term?.['medianResumeS'])} s; start.sh runs ${rows(term).map((r) => String(r['startShRuns'])).join(', ')}`, '≤ 8 s, one start.sh', term?.['met']);
  const f = load('fleet');
  const at = (n: number): Json | undefined => rows(f).find((r) => r['nodes'] === n);
  const f1 = at(1);
  const f32 = at(32);
  if (f1) add(f, 'fleet, 1 node: full up vs its floor', '2.17×', `${String(f1['vsFloor'])}× (${String(f1['wallS'])} vs ${String(f1['floorWallS'])} s)`, '≤ 1.2×', Number(f1['vsFloor']) <= 1.2);
  if (f32) add(f, 'fleet, 32 nodes at once: full up vs the floor at 32', '1.48×', `${String(f32['vsFloor'])}× (${String(f32['wallS'])} vs ${String(f32['floorWallS'])} s)`, '≤ 1.15×', Number(f32['vsFloor']) <= 1.15);
  const sdk = load('sdk-step');
  const sp = sdk?.['pulse'] as Json | null | undefined;
  if (sdk) add(sdk, 'one step\'s cost to Temporal itself (bare SDK workflow of 13 no-op activities)', '-', `${String(sdk['perStepMs'])} ms a step (workflow task + dispatch); pulse's: ${String(sp?.['perStepMs'] ?? '-')} ms; least full-up ratio with one activity per step: ${String(sp?.['leastFullUpRatio'] ?? '-')}×`, '-', null);
  const h = load('history');
  const hf = rows(h)[0];
  if (hf) add(h, 'history of one full up', '44 KB', `${String(hf['kib'])} KiB (${String(hf['bytes'])} B, ${String(hf['events'])} events)`, '≤ 16 KB', h?.['met']);
  const cl = load('cluster');
  for (const r of rows(cl)) add(cl, `production cluster (PostgreSQL) vs dev server, ${String(r['what'])}`, '-', `${String(r['clusterVsDev'])}×${r['clusterVsFloor'] === null ? '' : `; cluster ${String(r['clusterVsFloor'])}× its floor`}`, '-', null);
  const from = [...runs];
  out.push('', from.length === 1 ? `All from one run: ${from[0] ?? ''}.` : `NOT from one run: ${from.join(', ')}.`);
  return out.join('\n');
}

async function main(): Promise<void> {
  if (process.argv[2] === 'speed') {
    process.stdout.write(`${speedTable()}\n`);
    return;
  }
  const out: string[] = ['| benchmark | figure | goal | result | command |', '|---|---|---|---|---|'];
  const add = (what: string, figure: string, goal: string, ok: unknown, cmd: string): void => {
    out.push(`| ${what} | ${figure} | ${goal} | ${met(ok)} | \`node dist/bench/${cmd}\` |`);
  };
  const o = load('overhead');
  for (const r of rows(o)) add(`controller overhead, ${String(r['path'])}`, `${String(r['ratio'])}× the floor (${String(r['temporalMs'])} ms vs ${String(r['floorMs'])} ms)`, String(r['goal']).replace('<=', '≤'), r['met'], 'overhead.js');
  const sdk = load('sdk-step');
  const sp = sdk?.['pulse'] as Json | null | undefined;
  if (sdk) add('one step\'s cost to Temporal itself (bare SDK, 13 no-op activities)', `${String(sdk['perStepMs'])} ms a step (workflow task + dispatch; pulse's: ${String(sp?.['perStepMs'] ?? '-')} ms); least full-up ratio with one activity per step ${String(sp?.['leastFullUpRatio'] ?? '-')}×`, '-', null, 'sdk-step.js');
  const l = load('readiness-lag');
  if (l) add('readiness detection lag', `median ${String(l['medianMs'])} ms, max ${String(l['maxMs'])} ms`, 'median ≤ 100 ms, max ≤ 250 ms', l['met'], 'readiness-lag.js');
  const uw = load('user-view-wall');
  const um = uw?.['medianMs'] as Json | undefined;
  if (uw && um) add('`pulse model up best --restart` as a user times it (spawn → exit) vs its floor (issue 28)', `+${String(um['addedMs'])} ms (${String(um['cliMs'])} vs ${String(um['floorMs'])} ms): spawn → workflow started ${String(um['toStartedMs'])} ms, workflow ${String(um['workflowMs'])} ms, close → noticed ${String(um['closeNoticedMs'])} ms, last line → exit ${String(um['lastLineToExitMs'])} ms; load ${String((uw['machine'] as Json | undefined)?.['loadavg'] ?? '-')}`, '≤ +500 ms', uw['met'], 'user-view.js wall');
  const ur = load('user-view-ready');
  const rm = ur?.['medianMs'] as Json | undefined;
  if (ur && rm) add('server can answer (it listens) → pulse\'s verify request reaches it (issue 28)', `median ${String(rm['listenToVerifyReqMs'])} ms, max ${String(ur['maxMs'])} ms: listen → readiness done ${String(rm['listenToReadyDoneMs'])}, workflow task ${String(rm['workflowTaskMs'])}, dispatch ${String(rm['dispatchMs'])}, verify's script to its request ${String(rm['verifyStartToRequestMs'])} ms; load ${String((ur['machine'] as Json | undefined)?.['loadavg'] ?? '-')}`, 'median ≤ 100 ms', ur['met'], 'user-view.js ready');
  for (const name of ['fleet', 'fleet-ready10s']) {
    const f = load(name);
    const rs = rows(f);
    const big = rs[rs.length - 1];
    if (!f || !big) continue;
    const floor = (f['floorVsOneNode'] as Json[] | undefined)?.at(-1)?.['ratio'];
    add(
      `fleet scale (server ready after ${Number(f['readyMs'] ?? 1000) / 1000} s)`,
      `${String(big['nodes'])} nodes ${String(big['vsOneNode'])}× one node (floor: ${String(floor)}×); worker peak RSS ${rs.map((r) => `${String(r['nodes'])}: ${String(r['workerPeakRssMiB'])}`).join(', ')} MiB`,
      `${String(big['nodes'])} ≤ 3× 1`,
      f['met'],
      `fleet.js 1,8,32${name === 'fleet' ? '' : ' 10000'}`,
    );
  }
  const s = load('status');
  if (s) add('status 1 vs 8 nodes', `${rows(s).map((r) => `${String(r['nodes'])} node(s): ${String(r['medianS'])} s`).join(', ')} (8/1 = ${String(s['eightVsOne'])}×)`, '-', null, 'status.js');
  const sl = load('status-log');
  if (sl) add('status on a large container log (json-file, never rotated)', `${rows(sl).map((r) => `${String(r['log'])}: ${String(r['medianS'])} s`).join(', ')} (large/small = ${String(sl['largeVsSmall'])}×)`, `≤ ${String(sl['goal'])}×`, sl['met'], 'status-log.js');
  const c = load('coldstart');
  for (const r of rows(c)) if (String(r['command']).startsWith('pulse')) add(`cold start, ${String(r['command'])}`, `median ${String(r['medianS'])} s, worst ${String(r['worstS'])} s`, '< 0.5 s', r['met'], 'coldstart.js');
  for (const [name, sig] of [['recovery', 'SIGKILL'], ['recovery-sigterm', 'SIGTERM']] as const) {
    const rec = load(name);
    if (rec) add(`crash recovery (${sig} during readiness)`, `poll resumed after ${String(rec['medianResumeS'])} s (median); start.sh runs: ${rows(rec).map((r) => String(r['startShRuns'])).join(', ')}`, `≤ ${String(rec['goalS'])} s, 1 start.sh`, rec['met'], `recovery.js${sig === 'SIGTERM' ? ' 2 SIGTERM' : ''}`);
  }
  const cl = load('cluster');
  for (const r of rows(cl)) {
    const vsFloor = r['clusterVsFloor'] === null ? '' : `; vs the floor: cluster ${String(r['clusterVsFloor'])}×, dev ${String(r['devVsFloor'])}×`;
    add(`PostgreSQL cluster vs dev server, ${String(r['what'])}`, `${String(r['clusterVsDev'])}× (${String(r['clusterMs'])} ms vs ${String(r['devMs'])} ms${vsFloor})`, '-', null, 'cluster.js');
  }
  const ssh = load('ssh-connections');
  if (ssh) add('ssh connections per deploy', rows(ssh).map((r) => `${String(r['deploys'])}: ${String(r['perNodePerDeploy'])}`).join('; '), '1 per node', ssh['met'], 'ssh-connections.js');
  const tun = load('tunnel-reconnect');
  if (tun) {
    const f = (k: string): string => { const v = tun[k] as Json; return `median ${String(v['median'])} ms, max ${String(v['max'])} ms`; };
    const o = tun['outage'] as Json;
    add('tunnel reconnect (ssh link killed)', `link back ${f('linkBack')}; 200 through the tunnel ${f('serving')}; endpoint enabled ${f('enabled')}; after a ${String(o['outageS'])} s sshd outage: ${String(o['sshdBackToLinkMs'])} ms from sshd back`, `link back ≤ ${String(tun['goalMs'])} ms`, tun['met'], 'tunnel-reconnect.js');
  }
  const rb = load('rollback-outage');
  if (rb) add(`outage of a failed up with --auto-rollback (never ready, budget ${String(rb['readinessBudgetS'])} s)`, `median ${String(rb['medianAutoRollbackS'])} s from the stop to serving again; floor (one stop + one start of the old .env) ${String(rb['medianFloorS'])} s; added over floor + budget ${String(rb['medianAddedS'])} s; without it: until a person acts`, '-', null, 'rollback-outage.js');
  const ro = load('rollout');
  if (ro) add(`rollout over ${String(ro['nodes'])} nodes vs ${String(ro['nodes'])} single ups back to back (up best --restart)`, `rollout median ${String(ro['medianRolloutS'])} s, singles ${String(ro['medianSinglesS'])} s: ${String(ro['medianPerNodeOverheadS'])} s per node for the guard, the worker's plan, the child start and the smoke gate`, '-', null, 'rollout.js');
  const dr = load('drain');
  if (dr) {
    const [off, on] = rows(dr);
    if (off && on) add(`drain: requests cut in a rollout of ${String(dr['nodes'])} nodes under steady streaming load (${String(dr['clientsPerNode'])} clients/node)`, `no drain: ${String(off['cut'])} cut (${String(off['completed'])} completed); drain: ${String(on['cut'])} cut (${String(on['completed'])} completed; drains ${String(on['drainS'])} s)`, '-', null, 'drain.js');
    add('drain: time the drain step adds to an up on an idle server', `median ${String(dr['medianIdleDrainMs'])} ms, max ${String(dr['maxIdleDrainMs'])} ms`, '< 0.5 s', Number(dr['maxIdleDrainMs']) < 500, 'drain.js');
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

runMain(main);
