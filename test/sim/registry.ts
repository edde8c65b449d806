/**
 * Every running sim of this process, so an `after()` hook can stop them all and a crashing test process still
 * kills its nodes on exit. A small file registry under the temp dir also lets the next startSim kill the nodes of
 * a test process that died by SIGKILL (no exit handler ran).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { engineOrphans, killEngine } from './engine.js';
import { killNamespaces, mountTag } from './procs.js';
import { pidAlive } from '../../runtime/state/pid.js';

/** What the registry needs of a started sim (index.ts Sim). */
interface Sim {
  readonly dir: string;
  readonly ownsDir: boolean;
  readonly nodes: readonly { readonly namespaces: ReadonlySet<string>; readonly cgroupKey: string }[];
  killSync(): void;
  stop(): Promise<void>;
}

const live = new Set<Sim>();
const REGISTRY = path.join(os.tmpdir(), 'pulse-sim-registry');
let exitHook = false;

function entryFile(sim: Sim): string {
  return path.join(REGISTRY, `${process.pid}-${Buffer.from(sim.dir).toString('hex').slice(-40)}.json`);
}

/** Records a started sim (in memory and in the registry). */
export function registerSim(sim: Sim): void {
  live.add(sim);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () =>
      live.forEach((s) => {
        s.killSync();
        fs.rmSync(entryFile(s), { force: true });
      }),
    );
  }
  updateEntry(sim);
}

/** Rewrites the registry entry with the sim's current namespaces (call after an sshd (re)start). */
export function updateEntry(sim: Sim): void {
  fs.mkdirSync(REGISTRY, { recursive: true });
  const ns = sim.nodes.flatMap((n) => [...n.namespaces]);
  const cgroups = sim.nodes.map((n) => n.cgroupKey);
  fs.writeFileSync(entryFile(sim), JSON.stringify({ owner: process.pid, dir: sim.dir, ownsDir: sim.ownsDir, ns, cgroups }));
}

/** Forgets a stopped sim. */
export function forgetSim(sim: Sim): void {
  live.delete(sim);
  fs.rmSync(entryFile(sim), { force: true });
}

/** Stops every sim this process started (for `after()` hooks: safe to call when none runs). */
export async function stopAllSims(): Promise<void> {
  await Promise.all([...live].map((s) => s.stop()));
}


/** Kills the nodes of sims whose owning process is gone, and engines no live sim names whose data root is gone. */
export function reapStaleSims(): void {
  let files: string[];
  try {
    files = fs.readdirSync(REGISTRY);
  } catch {
    files = [];
  }
  reapEntries(files);
  // An engine no live entry names (its entry was removed by a reaper that knew no engines) whose data root went with
  // its sim dir serves nobody: end it too. A live sim's engines are in its entry, even while its dockerd is down.
  const named = new Set<string>();
  for (const f of safeList(REGISTRY)) {
    try {
      for (const k of (JSON.parse(fs.readFileSync(path.join(REGISTRY, f), 'utf8')) as { cgroups?: string[] }).cgroups ?? []) named.add(k);
    } catch {
      /* half-written: next time */
    }
  }
  for (const key of engineOrphans()) if (!named.has(key)) killEngine(key);
}

function safeList(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function reapEntries(files: string[]): void {
  for (const f of files) {
    const file = path.join(REGISTRY, f);
    try {
      const entry = JSON.parse(fs.readFileSync(file, 'utf8')) as { owner: number; dir: string; ownsDir?: boolean; ns: string[]; cgroups?: string[] };
      if (pidAlive(entry.owner)) continue;
      // Only a sim's own cgroups (pulse-sim/<sim dir>-<node>): a forged or stale entry names nothing else.
      for (const key of entry.cgroups ?? []) if (key.startsWith(`pulse-sim/${path.basename(entry.dir)}-`) && !key.includes('..')) killEngine(key);
      killNamespaces(new Set(entry.ns), mountTag(entry.dir));
      if (entry.ownsDir && path.basename(entry.dir).startsWith('pulse-sim-')) fs.rmSync(entry.dir, { recursive: true, force: true });
      fs.rmSync(file, { force: true });
    } catch {
      fs.rmSync(file, { force: true });
    }
  }
}
