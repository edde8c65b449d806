/** The scheduled health watch (`pulse model watchdog`): its request, one check's findings and one run's outcome. */
import type { WatchdogRecord, WatchdogVerdict } from './node-state.js';

/**
 * The input of every scheduled watchdogWorkflow run: names and flags only. The worker reads the node (host,
 * protected flag, recipes) from its own nodes.json, and the node's recorded profile from its own state.
 */
export interface WatchdogRequest {
  action: 'watchdog';
  version: 1;
  node: string;
  /** The schedule's interval (s): the heals' growing pauses are counted in it. */
  everyS: number;
  /** N: failed checks in a row before the endpoint is disabled (and a heal), good ones before it is enabled again. */
  after: number;
  /** --heal: bring last known good back up (the rollback workflow) after N failed checks. */
  heal: boolean;
  /** K: heals in any hour at most. */
  healsPerHour: number;
  /** --yes at `on`: HTTP checks and heals on a protected node. */
  confirmed: boolean;
  /** `off`: clear the node's record (the endpoint's watchdog reason with it) instead of checking. */
  clear?: true;
}

/** What one read-only check of a node found (the status script's findings, no secret). */
export interface WatchdogCheck {
  node: string;
  answered: boolean;
  error: string | null;
  container: { name: string; exists: boolean; running: boolean; state: string; restartCount: number | null; exitMeaning: string | null } | null;
  /** The HTTP checks ran (false on a protected node without --yes at `on`: `httpSkipped` says so). */
  http: boolean;
  httpSkipped: string | null;
  httpStatus: number | null;
  healthOk: boolean;
  /** GET /health's code (200 alive, 503 engine dead, 0 no answer); absent where it was not asked (older runs). */
  healthRoute?: number | null;
  servedModels: string[];
  maxModelLen: number | null;
  drift: boolean;
  envProfile: string | null;
  memoryWarning: string | null;
  /** A deploy holds the node's lock now (any controller's). */
  locked: string | null;
  /** docker's words when the node's Docker daemon does not answer (the container's state is unknown then); absent or null: it answered. */
  dockerDown?: string | null;
}

/** One run's end: the verdict, whether it changed, the record written, and the heal it started (if any). */
export interface WatchdogOutcome {
  node: string;
  verdict: WatchdogVerdict;
  reason: string | null;
  /** The judged verdict changed in this run (its history row): from → to. */
  changed: { from: 'ok' | 'down' | null; to: 'ok' | 'down' } | null;
  record: WatchdogRecord | null;
  /** The backup a heal restores, when this run should heal now. */
  heal: { backup: string; renderedAt: string } | null;
  /** How the heal ended (set by the workflow after its child). */
  healed?: { ok: boolean; detail: string } | null;
  /** One line for history and the UI. */
  summary: string;
}
