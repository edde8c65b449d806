/**
 * The watchdog's two activities (issue 16). watchdogProbe (the node queue) runs the read-only status script on the
 * node, as `pulse model status` does (runtime/status/collect.ts: container, restart count, /v1/models, .env, memory,
 * the node lock) and GET /health besides (a dead engine answers 503 there while /v1/models still answers), with HTTP
 * only where the protected rules allow it. watchdogRecord (the state queue, where node
 * states and the gateway file live) judges the findings against the node's recorded deploy, writes the record,
 * republishes the gateway file, and says whether to heal now. Both take only names and flags: the node, its
 * protected flag and its recipes come from the worker's own nodes.json.
 */
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { nodeOf, type NodesConfig } from '../runtime/config/nodes.js';
import { refusePlan } from '../runtime/plan/plan-check.js';
import { fleetOf } from '../runtime/plan/plan.js';
import { statusOfNode } from '../runtime/status/collect.js';
import { checkOf, healDecision, judge, nextRecord, watchdogRequestProblem, watchdogStatusRequest } from '../runtime/fleet/watchdog.js';
import { utc } from '../runtime/format.js';
import type { NodeState, WatchdogCheck, WatchdogOutcome, WatchdogRecord, WatchdogRequest } from '../runtime/model/index.js';
import type { ActivityDeps } from './deps.js';
import { classified, toFailure } from './errors.js';

/** The request checked against the worker's nodes.json; a refusal is not retried. */
function checked(config: NodesConfig, input: unknown): WatchdogRequest {
  return classified(() => {
    const problem = watchdogRequestProblem(input);
    if (problem) throw refusePlan(problem);
    const req = input as WatchdogRequest;
    if (!Object.hasOwn(config.nodes, req.node)) throw refusePlan(`node ${JSON.stringify(req.node)} is not in the worker's nodes.json (${config.file})`);
    return req;
  });
}

/**
 * How far the streak is, against --after N (issue 30 item 10: a bare `(1 in a row)` read as if one check had disabled
 * the endpoint): `1 of 2 failed checks before the endpoint is disabled`, `2 failed checks in a row: endpoint disabled`.
 */
export function streakWords(rec: Pick<WatchdogRecord, 'verdict' | 'streak' | 'disabled'>, after: number): string {
  if (rec.verdict === 'down') {
    return rec.disabled !== null ? `${rec.streak} failed check(s) in a row: endpoint disabled` : `${rec.streak} of ${after} failed checks before the endpoint is disabled`;
  }
  return rec.disabled !== null ? `${rec.streak} of ${after} good checks before the endpoint is enabled again` : `${rec.streak} good check(s) in a row`;
}

function summaryOf(node: string, rec: WatchdogRecord | null, changed: WatchdogOutcome['changed'], after: number): string {
  if (!rec) return `watchdog on ${node}: record cleared`;
  const what = rec.verdict === 'skipped' ? `skipped: ${rec.reason ?? ''}` : `${rec.verdict}${rec.reason ? `: ${rec.reason}` : ''} (${streakWords(rec, after)})`;
  return `watchdog on ${node}: ${changed ? `${changed.from ?? 'new'} → ${changed.to}, ` : ''}${what}`;
}

export function watchdogActivities(deps: ActivityDeps) {
  return {
    /** One read-only check of the node (never a change): what `status` sees, HTTP only where allowed. */
    async watchdogProbe(input: WatchdogRequest): Promise<WatchdogCheck> {
      const { config } = deps.files.load();
      const req = checked(config, input);
      const node = nodeOf(config, req.node);
      const s = await statusOfNode(config, req.node, watchdogStatusRequest(req), {
        open: (target) => Promise.resolve(deps.nodes.session(target)),
        stateDir: deps.stateDir,
      });
      if (node.protected && !req.confirmed && s.health.checked) throw new Error('internal: an HTTP check on a protected node without --yes');
      return checkOf(s);
    },

    /** Judge the check, write the node's record (and the gateway file); clear it for `off`. */
    async watchdogRecord(input: { request: WatchdogRequest; check: WatchdogCheck | null }): Promise<WatchdogOutcome> {
      const { config } = deps.files.load();
      const req = checked(config, input.request);
      const attempt = Context.current().info.attempt;
      try {
        const old = await deps.state.readNodeState(deps.stateDir, req.node);
        const now = utc(deps.clock.now());
        if (req.clear || !input.check) {
          if (old?.watchdog) {
            const { watchdog: _cleared, ...rest } = old;
            await deps.state.writeNodeState(deps.stateDir, rest);
            await deps.state.publishFragment(deps.stateDir, fleetOf(config));
          }
          return { node: req.node, verdict: 'skipped', reason: 'cleared', changed: null, record: null, heal: null, summary: summaryOf(req.node, null, null, req.after) };
        }
        const j = judge(input.check, old);
        const rec = nextRecord(old?.watchdog, j, input.check, req, now);
        const from = old?.watchdog?.judged ?? null;
        const changed = rec.judged !== null && rec.judged !== from ? { from, to: rec.judged } : null;
        const decision = healDecision(rec, req, nodeOf(config, req.node).protected, now, j.noHeal);
        let heal: WatchdogOutcome['heal'] = null;
        let state: NodeState | null = old;
        if (decision.heal) {
          const backup = backupOf(config, req.node, old);
          if (backup) {
            heal = { backup, renderedAt: now };
            rec.heals = [...rec.heals, now];
            rec.healsTotal += 1;
            rec.sinceHeal = 0;
          } else rec.notes.push('no last known good to heal with (no verified up recorded)');
        } else if (decision.why) rec.notes.push(decision.why);
        if (!decision.heal && decision.gaveUp) {
          rec.gaveUp = decision.gaveUp;
          if (old) state = { ...old, state: 'failed', error: `watchdog: ${decision.gaveUp}`, at: now };
          deps.logger.warn(`watchdog on ${req.node}: ${decision.gaveUp}`);
        }
        if (state) {
          await deps.state.writeNodeState(deps.stateDir, { ...state, watchdog: rec });
          await deps.state.publishFragment(deps.stateDir, fleetOf(config));
        }
        if (changed) deps.logger.info(`watchdog on ${req.node}: ${changed.from ?? 'new'} → ${changed.to}${rec.reason ? `: ${rec.reason}` : ''}`);
        return { node: req.node, verdict: rec.verdict, reason: rec.reason, changed, record: rec, heal, summary: summaryOf(req.node, rec, changed, req.after) };
      } catch (err) {
        throw toFailure(err, attempt, false);
      }
    },
  };
}

/** The .env a heal brings back: last known good's backup, or the live .env while it is last known good. */
function backupOf(config: NodesConfig, node: string, state: NodeState | null): string | null {
  const good = state?.lastKnownGood;
  if (!good) return null;
  if (good.backupPath) return good.backupPath;
  const dir = Object.values(nodeOf(config, node).recipes)[0]?.dir;
  return dir ? path.posix.join(dir, '.env') : null;
}
