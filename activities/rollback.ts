/**
 * planRollback: the first step of a rollback. The request only names the node and the backup; the worker reads the
 * backup on the node (its text without the secret lines, which never leave the node) and makes the plan from it and
 * its own nodes.json (runtime/plan/restore.ts), so the plan is the worker's. A protected node without --yes, a backup pulse
 * did not write or one edited by hand (without --force) are refused here, before anything on the node changes.
 */
import { Context } from '@temporalio/activity';
import { nodeOf } from '../runtime/config/nodes.js';
import { refusePlan } from '../runtime/plan/plan-check.js';
import { backupRecipeDir, buildRestorePlan, keyDifference } from '../runtime/plan/restore.js';
import { readBackup } from '../runtime/steps/index.js';
import type { RollbackRequest } from '../runtime/model/index.js';
import type { RollbackPlan } from './contract.js';
import type { ActivityDeps } from './deps.js';
import { classified } from './errors.js';
import { nodeStep } from './heartbeat.js';

type Obj = Record<string, unknown>;

/** The request's fields, each of the shape pulse sends (anything else is refused). */
function request(input: unknown): RollbackRequest {
  const o = (typeof input === 'object' && input !== null ? input : {}) as Obj;
  const ok = o['action'] === 'rollback' && o['version'] === 1 && typeof o['node'] === 'string' && typeof o['backup'] === 'string'
    && typeof o['confirmed'] === 'boolean' && typeof o['force'] === 'boolean' && typeof o['renderedAt'] === 'string'
    && !Number.isNaN(Date.parse(o['renderedAt'])) && (o['undid'] === null || typeof o['undid'] === 'string')
    && (o['timeoutS'] === null || (typeof o['timeoutS'] === 'number' && o['timeoutS'] > 0 && o['timeoutS'] <= 7 * 86400))
    && (o['restart'] === undefined || typeof o['restart'] === 'boolean')
    && (o['drainS'] === undefined || o['drainS'] === null || (typeof o['drainS'] === 'number' && Number.isInteger(o['drainS']) && o['drainS'] >= 0 && o['drainS'] <= 7 * 86400));
  if (!ok) throw refusePlan('not a rollback request of version 1');
  return o as unknown as RollbackRequest;
}

export function rollbackActivities(deps: ActivityDeps) {
  return {
    /** Read and check the backup on the node; the rollback's plan (an UpPlan with `restore`), or a refusal. */
    async planRollback(input: RollbackRequest): Promise<RollbackPlan> {
      const files = deps.files.load();
      const { req, node, recipeDir } = classified(() => {
        const r = request(input);
        if (!Object.hasOwn(files.config.nodes, r.node)) throw refusePlan(`node ${JSON.stringify(r.node)} is not in the worker's nodes.json (${files.config.file})`);
        const n = nodeOf(files.config, r.node);
        if (n.protected && !r.confirmed) throw refusePlan(`${r.node} is protected: rollback needs --yes`);
        return { req: r, node: n, recipeDir: backupRecipeDir(files.config, r.node, r.backup) };
      });
      const target = node.host === 'ssh' ? { name: req.node, host: 'ssh' as const, ssh: node.ssh } : { name: req.node, host: 'local' as const };
      const read = await nodeStep(deps.heartbeatEveryMs ?? 5000, (o) => readBackup(deps.nodes.session(target), req.backup, `${recipeDir}/.env`, o));
      const plan = classified(() => buildRestorePlan(files.config, files.profiles, {
        node: req.node, backup: req.backup, text: read.text, yes: req.confirmed, force: req.force, timeoutS: req.timeoutS, protectBackup: req.backup,
        restart: req.restart === true,
      }, new Date(Date.parse(req.renderedAt))));
      deps.logger.info(`rollback planned on ${req.node}: ${plan.profile} from ${req.backup}`, { workflowId: Context.current().info.workflowExecution?.workflowId });
      return { plan, secretLines: read.secretLines, keyDifference: keyDifference(read.current, plan.env.values) };
    },
  };
}
