/**
 * The plan: the reviewable, JSON-safe plan of upWorkflow/downWorkflow, exactly what `up --dry-run` prints (an up starts
 * with its UpStart: the plan without the rendered .env). Nothing here may hold a secret: it is stored in history forever.
 */

/** How to reach a node: from nodes.json (`host`, `ssh`), inside the plan and in every node session. */
export interface NodeTarget {
  /** Node name in nodes.json, e.g. spark2. */
  name: string;
  host: 'local' | 'ssh';
  /** The ssh alias or user@host, resolved with `ssh -G`. Required when host is ssh. */
  ssh?: string | undefined;
}

export interface PlanRecipe {
  /** Recipe name in nodes.json, e.g. qwen38-flash. */
  name: string;
  dir: string;
  /** start.sh path (absolute, or relative to dir). */
  start: string;
  stop: string;
  /** The recipe's container name (TP1_CONTAINER_NAME of the recipe). */
  container: string;
}

/** One `-v SRC:DST[:mode]` of the rendered EXTRA_DOCKER_ARGS (after overlay merge). */
export interface PlanMount {
  src: string;
  dst: string;
  mode: 'ro' | 'rw' | null;
  from: 'profile' | 'overlay' | 'node';
}

export interface EnvIdentity {
  /** sha256 hex of the assignment lines, as in the `# pulse-sha256:` header. */
  sha256: string;
  profile: string;
  /** The `# pulse-overlay:` value: `none` or `DIR overlay-sha256=<hex>`. */
  overlay: string;
}

/** The reviewable plan of an up: exactly what `up --dry-run` prints (upWorkflow's input is its UpStart, or older: it whole). */
export interface UpPlan {
  action: 'up';
  version: 1;
  node: string;
  target: NodeTarget;
  profile: string;
  protected: boolean;
  /** --yes was given. The workflow itself refuses a protected node without it. */
  confirmed: boolean;
  /** --experimental was given (the worker refuses an experimental profile without it, as the CLI does). */
  experimental: boolean;
  recipe: PlanRecipe;
  env: {
    /** Full text of the rendered .env (header + assignments), no secrets (profiles cannot set them). */
    text: string;
    identity: EnvIdentity;
    /** Absolute path of the recipe .env on the node. */
    path: string;
    /** The rendered key map (assignment values), for the preflight diff and the checks. */
    values: Record<string, string>;
  };
  /** UTC stamp used for file names on the node (backup, log), e.g. 20260923T101500Z. */
  stamp: string;
  /** ISO time of the render (pulse-rendered). */
  renderedAt: string;
  mkdirs: string[];
  mounts: PlanMount[];
  /** Human lines: each overlay mount that replaced a profile mount (--overlay-wins). */
  replacements: string[];
  /** The overlay as read by the CLI: `args` and `manifestText` are its two files' exact texts, so the worker can check
   * the pairs and the overlay-sha256 itself (older plans lack them, and the worker refuses those). */
  overlay: { dir: string; sha256: string; manifest: unknown; args: string; manifestText: string } | null;
  proofs: string[];
  clientNotes: string[];
  expect: {
    servedModelName: string;
    maxModelLen: number | null;
    port: number;
    bind: string;
  };
  /** memory gate in GiB (--min-mem-gib, node, or top-level) and its wait (memTimeoutS). */
  memory: { gateGiB: number; timeoutS: number };
  /** Readiness wait: --timeout-s, default READY_TIMEOUT_S + readyGraceS. */
  readiness: { timeoutS: number };
  restart: boolean;
  /** Everything the gateway fragment needs about the fleet, so the publish step needs no nodes.json. */
  fleet: FleetEntry[];
  /** The command that goes back to the previous profile, computed at plan time from the node state. */
  rollbackHint: string | null;
  /**
   * Backup pruning by the write step: keep the newest `keep` .env backups (nodes.json keepBackups, default 10) and
   * always `protect`, the backup last known good points to (from the node state). Absent in older plans: no pruning.
   */
  backups?: { keep: number; protect: string | null };
  /**
   * up --auto-rollback or nodes.json autoRollback: a failure or cancel after the stop began brings the .env that was
   * live before back up (a rollbackWorkflow child). Absent in older plans: no automatic rollback.
   */
  autoRollback?: boolean;
  /**
   * A rollback's plan (runtime/plan/restore.ts): the write step copies this backup's exact bytes (secrets included, read on
   * the node) instead of writing env.text, after checking on the node that its non-secret lines are env.text.
   */
  restore?: RestoreSource;
}

/** Where a rollback's .env comes from, and what check it passed or was forced past. */
export interface RestoreSource {
  /** The backup file on the node (a .env.pulse-bak-* of the recipe dir, or the recipe .env itself). */
  backup: string;
  /** Why the backup would be refused without --force (hand-edited, no pulse header), or null: it passed the check. */
  forced: string | null;
}

/**
 * The input of rollbackWorkflow: only names. The worker reads the backup on the node and builds the plan (its first
 * step), so a hand-made request can only ever restore a file that is on the node in the recipe dir.
 */
export interface RollbackRequest {
  action: 'rollback';
  version: 1;
  node: string;
  /** The backup to restore (--to, last known good's, or the one the failed up wrote). */
  backup: string;
  confirmed: boolean;
  /** --force: restore a backup that fails the header check. */
  force: boolean;
  /** Render time of the request (the stamp of the files the rollback writes), ISO seconds. */
  renderedAt: string;
  /** The deploy this rollback undoes (workflowId/runId), when an up's auto-rollback started it. */
  undid: string | null;
  /** --timeout-s for the readiness wait; default READY_TIMEOUT_S of the backup + readyGraceS. */
  timeoutS: number | null;
  /**
   * Stop and start the server even when the backup's identity already runs (the plan's --restart). A watchdog heal
   * sets it: a heal always restarts. Absent in requests from before it (false).
   */
  restart?: boolean;
  /** --drain-s (0: --no-drain) for the drain before the stop; absent or null: the worker's nodes.json drainBudgetS. */
  drainS?: number | null;
}

/**
 * What a node step of an up gets instead of the whole plan (issue 11: the plan, .env text included, travels in
 * history once, as the workflow input). Only the names the worker rebuilds its own plan from (runtime/plan/plan-check.ts
 * ownUpPlan: the same keys as in the plan) and `planDigest`, the sha256 of the worker's own plan that the plan check
 * (checkPlan, before step 1) returned: a step runs only when the plan it rebuilds has that digest.
 */
export interface UpPlanRef extends Pick<UpPlan, 'action' | 'version' | 'node' | 'profile' | 'renderedAt' | 'confirmed' | 'experimental' | 'restart' | 'replacements' | 'memory' | 'readiness' | 'rollbackHint' | 'backups' | 'autoRollback'> {
  overlay: Pick<NonNullable<UpPlan['overlay']>, 'dir' | 'args' | 'manifestText'> | null;
  planDigest: string;
}

/**
 * What the plan check and every node step of an up get since HISTORY_PATCH (workflows/definitions.ts): the node, and
 * that the plan is the workflow's own input (the UpStart, or a whole plan), which the worker reads from the
 * workflow's history (activities/workflow-input.ts) and checks as any plan. The plan is then in history once.
 */
export interface UpInputRef {
  node: string;
  from: 'workflow input';
}

/**
 * The plan check's input for an up: the plan without the .env's key map (the assignments of env.text, which the
 * check compares with the worker's own render like every other field).
 */
export type UpCheckInput = Omit<UpPlan, 'env'> & { env: Omit<UpPlan['env'], 'values'> };

/**
 * What the CLI starts upWorkflow with (issue 11): the plan without the rendered .env (env.text and its key map,
 * which every worker renders again from its own files) and with `planDigest`, the sha256 of the whole plan
 * (runtime/plan/plan-check.ts planDigest). The plan check compares every field it carries with the worker's own plan,
 * naming the first differences, and refuses another digest, so the .env text is still checked, by its digest.
 * Older deploys (and hand-made starts) pass the whole UpPlan; the workflow tells the two apart by `planDigest`.
 */
export type UpStart = Omit<UpPlan, 'env'> & { env: Pick<UpPlan['env'], 'identity' | 'path'>; planDigest: string };

/**
 * The second, optional argument of upWorkflow/downWorkflow: how the deploy was asked for, beyond the plan. Absent
 * from older deploys and from starts other than the CLI's.
 */
export interface DeployOptions {
  /**
   * --verbose: the node steps keep their raw `@pulse` lines in their results (history), for `up/down --verbose` and a
   * later `watch --verbose`. Without it a deploy's history holds none (issue 11: they were most of its bytes).
   */
  verbose?: boolean;
  /**
   * --drain-s N (0: --no-drain): the drain before the stop waits at most N seconds for the requests in flight.
   * Absent: the worker's nodes.json drainBudgetS (the node's, else the top level's).
   */
  drainS?: number;
}

export interface DownPlan {
  action: 'down';
  version: 1;
  node: string;
  target: NodeTarget;
  protected: boolean;
  confirmed: boolean;
  recipe: PlanRecipe;
  stamp: string;
  fleet: FleetEntry[];
}

export type Plan = UpPlan | DownPlan;

export interface FleetEntry {
  node: string;
  gatewayUrl: string;
  /** Whether the gateway host can reach this node's server (a loopback BIND on another host cannot). */
  reachable: boolean;
  /**
   * nodes.json gatewayTunnel: `pulse tunnel` on the gateway host forwards 127.0.0.1:localPort to the node's server;
   * the endpoint then uses `url` and is enabled only while the tunnel's health file says it is up (docs/GATEWAY.md).
   */
  tunnel?: { localPort: number; url: string };
}
