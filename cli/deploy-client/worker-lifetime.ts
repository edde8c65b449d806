/**
 * When the background worker of the embedded default (cli/deploy-client/background-worker.ts) ends by itself: as soon as the
 * embedded server it serves is gone (its pid: `stopEmbeddedServer`, the demo's cleanup, a test's teardown, a crash),
 * and after PULSE_WORKER_IDLE_S seconds in a row with no deploy open, no step running and no watchdog schedule.
 */
import { pidAlive } from '../../runtime/state/pid.js';
import type { PulseWorker } from '../../worker/main.js';
import type { PulseTemporal } from './temporal.js';
import { openDeploys, watchdogSchedules } from './presence.js';

/** After a stop because the server is gone, a shutdown that still waits on it is cut short. */
const GONE_EXIT_MS = 10_000;

export interface LifetimeOptions {
  serverPid: number;
  idleS: number;
}

/** The server's pid is checked every second; the open deploys every 5 s (or idleS, when shorter). */
const PID_CHECK_MS = 1000;

function inFlight(w: PulseWorker): number {
  return [w.worker, w.gateway].reduce((n, x) => n + (x ? x.getStatus().numInFlightActivities : 0), 0);
}

/** The `lifetime` of runWorker (worker/main.ts) for the background worker. */
export function backgroundLifetime(t: PulseTemporal, o: LifetimeOptions): (w: PulseWorker, stop: (reason: string) => void) => () => void {
  return (w, stop) => {
    let idleSince: number | null = null;
    let lastCount = 0;
    let checking = false;
    let stopped = false;
    const end = (reason: string): void => {
      stopped = true;
      clearInterval(timer);
      stop(reason);
    };
    const check = async (): Promise<void> => {
      if (stopped || checking) return;
      checking = true;
      try {
        if (!pidAlive(o.serverPid)) {
          end(`the embedded Temporal server (pid ${o.serverPid}) is gone: exiting`);
          setTimeout(() => process.exit(0), GONE_EXIT_MS).unref();
          return;
        }
        if (Date.now() - lastCount < Math.min(5000, o.idleS * 1000)) return;
        lastCount = Date.now();
        // A watchdog schedule's checks run on this worker: while one exists, the worker is not idle.
        const open = (await openDeploys(t).catch(() => 1)) || (await watchdogSchedules(t).catch(() => 1)); // cannot tell: not idle
        if (open > 0 || inFlight(w) > 0) idleSince = null;
        else idleSince ??= Date.now();
        if (idleSince !== null && Date.now() - idleSince >= o.idleS * 1000) end(`no deploy open and no watchdog schedule for ${o.idleS} s (PULSE_WORKER_IDLE_S): exiting; the next pulse command starts a worker again`);
      } finally {
        checking = false;
      }
    };
    const timer = setInterval(() => void check(), PID_CHECK_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  };
}
