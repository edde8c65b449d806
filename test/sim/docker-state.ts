/**
 * Container state of one simulated node, persisted as files so every `docker` invocation (a short-lived process)
 * and the test process agree: dockerDir/containers/<name>/{config.json, log.jsonl, raw.log, exit.json}.
 * A container is a real process; its record is corrected on read when that process died by itself.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface MountRecord {
  Type: 'bind' | 'volume';
  Source: string;
  Destination: string;
  Mode: string;
  RW: boolean;
  Propagation: string;
}

/** Every state docker names (moby daemon/container/state.go, State()). */
export type ContainerStatus = 'created' | 'running' | 'paused' | 'restarting' | 'removing' | 'exited' | 'dead';

export interface ContainerState {
  Status: ContainerStatus;
  Running: boolean;
  Paused: boolean;
  Restarting: boolean;
  OOMKilled: boolean;
  Dead: boolean;
  Pid: number;
  ExitCode: number;
  Error: string;
  StartedAt: string;
  FinishedAt: string;
}

export interface ContainerRecord {
  Id: string;
  Name: string;
  Created: string;
  Path: string;
  Args: string[];
  State: ContainerState;
  Image: string;
  LogPath: string;
  /** Top level, as in `docker inspect` (not under State): restarts done by the restart policy. */
  RestartCount: number;
  HostConfig: {
    Binds: string[];
    NetworkMode: string;
    AutoRemove: boolean;
    PortBindings: Record<string, unknown>;
    RestartPolicy: { Name: string; MaximumRetryCount: number };
    /** The log driver and its options as the daemon merged them at create time (daemon log-opts + --log-opt). */
    LogConfig: { Type: string; Config: Record<string, string> };
  };
  Mounts: MountRecord[];
  Config: { Hostname: string; Image: string; Env: string[]; Cmd: string[]; Labels: Record<string, string> };
}

/**
 * Now in docker's time format: Go's time.RFC3339Nano in UTC, which drops trailing zeros of the fraction (and the
 * dot when the fraction is zero): `2026-12-02T09:20:05.12345678Z`, `2026-12-02T09:20:05Z`.
 */
export function dockerNow(ms = Date.now()): string {
  const extra = String(process.hrtime()[1] % 1_000_000).padStart(6, '0');
  return goTime(new Date(ms).toISOString().replace(/Z$/, `${extra}Z`));
}

/** An ISO time with a 9-digit fraction, formatted as Go's RFC3339Nano does. */
export function goTime(iso: string): string {
  return iso.replace(/\.(\d*?)0*Z$/, (_m, f: string) => (f ? `.${f}Z` : 'Z'));
}

/** docker's name for a state (State() in moby daemon/container/state.go): Running wins, then paused/restarting. */
export function stateName(s: Pick<ContainerState, 'Running' | 'Paused' | 'Restarting' | 'Dead' | 'StartedAt'>, removing: boolean): ContainerStatus {
  if (s.Running) return s.Paused ? 'paused' : s.Restarting ? 'restarting' : 'running';
  if (removing) return 'removing';
  if (s.Dead) return 'dead';
  if (s.StartedAt.startsWith('0001-')) return 'created';
  return 'exited';
}

/** Go's zero time, which docker prints for a FinishedAt that never happened. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** Directory of the container named `name`. */
export function containerDir(dockerDir: string, name: string): string {
  return path.join(dockerDir, 'containers', name);
}

/** Reserves `name` atomically (mkdir); false when a container of that name exists. */
export function reserveName(dockerDir: string, name: string): boolean {
  fs.mkdirSync(path.join(dockerDir, 'containers'), { recursive: true });
  try {
    fs.mkdirSync(containerDir(dockerDir, name));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Writes a record atomically (temp + rename) so concurrent readers never see half a file. */
export function saveRecord(dockerDir: string, rec: ContainerRecord): void {
  const file = path.join(containerDir(dockerDir, rec.Name.slice(1)), 'config.json');
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(rec, null, 2));
  fs.renameSync(tmp, file);
}

/** True when `pid` is a live (not zombie) process whose command line carries the container id. */
export function processAlive(pid: number, id: string): boolean {
  if (pid <= 0) return false;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(id);
  } catch {
    return false;
  }
}

/** Sidecar files of a container dir that are not part of what `docker inspect` shows. */
export const SIDE = {
  /** The pid of the container's monitor (docker-shim.js, containerd-shim's stand-in). */
  shim: 'shim.pid',
  /** RemovalInProgress (not persisted by docker either: `json:"-"`). */
  removing: 'removing',
  /** HasBeenManuallyStopped: docker stop/kill cancelled the restart manager. */
  manualStop: 'manual-stop',
} as const;

export function sidePath(dockerDir: string, name: string, file: string): string {
  return path.join(containerDir(dockerDir, name), file);
}

/** The pid in a sidecar file, or 0. */
export function readPidFile(file: string): number {
  try {
    return Number(fs.readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

/** True when the container's monitor still runs (then the record is kept up to date by it). */
export function shimAlive(dockerDir: string, rec: ContainerRecord): boolean {
  return processAlive(readPidFile(sidePath(dockerDir, rec.Name.slice(1), SIDE.shim)), rec.Id);
}

/**
 * Reads one container record. Its monitor (docker-shim.js) records exits and restarts as they happen; only when
 * that monitor is gone too (killed with everything else) is a record that says running corrected here, from
 * exit.json or as 137. State.Status is always derived from the flags, as docker derives it.
 * Only docker itself persists the correction: the test process reads (persist false), so its timer can never
 * write an old record over a container that docker just re-created under the same name.
 */
export function loadRecord(dockerDir: string, name: string, persist = true): ContainerRecord | null {
  const dir = containerDir(dockerDir, name);
  let rec: ContainerRecord;
  try {
    rec = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as ContainerRecord;
  } catch {
    return null;
  }
  if (rec.State.Running && !shimAlive(dockerDir, rec) && (rec.State.Restarting || !processAlive(rec.State.Pid, rec.Id))) {
    const exit = readExit(dir);
    rec.State = {
      ...rec.State,
      Running: false,
      Paused: false,
      Restarting: false,
      Pid: 0,
      ExitCode: exit?.code ?? 137,
      FinishedAt: exit?.at ?? dockerNow(),
    };
    rec.State.Status = stateName(rec.State, false);
    if (persist) saveRecord(dockerDir, rec);
  }
  rec.State.Status = stateName(rec.State, fs.existsSync(path.join(dir, SIDE.removing)));
  return rec;
}

/**
 * Read-modify-write of one record under a lock (a mkdir lock, taken over after 2 s), so the monitor recording an
 * exit and a CLI call pausing the container never lose each other's change. Returns the new record, or null.
 */
export async function updateRecord(dockerDir: string, name: string, fn: (rec: ContainerRecord) => void): Promise<ContainerRecord | null> {
  const lock = path.join(containerDir(dockerDir, name), 'lock');
  const until = Date.now() + 2000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null; // removed meanwhile
      if (Date.now() > until) break; // a holder that died: take it over
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  try {
    const rec = loadRecord(dockerDir, name);
    if (!rec) return null;
    fn(rec);
    rec.State.Status = stateName(rec.State, fs.existsSync(path.join(containerDir(dockerDir, name), SIDE.removing)));
    saveRecord(dockerDir, rec);
    return rec;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function readExit(dir: string): { code: number; at: string } | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'exit.json'), 'utf8')) as { code: number; at: string };
  } catch {
    return null;
  }
}

/** Every container of the node, oldest first. */
export function listRecords(dockerDir: string, persist = true): ContainerRecord[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(dockerDir, 'containers'));
  } catch {
    return [];
  }
  return names
    .map((n) => loadRecord(dockerDir, n, persist))
    .filter((r): r is ContainerRecord => r !== null)
    .sort((a, b) => a.Created.localeCompare(b.Created));
}

/** Finds a container by name (with or without the leading slash) or by an id prefix. */
export function findRecord(dockerDir: string, ref: string): ContainerRecord | null {
  const byName = loadRecord(dockerDir, ref.replace(/^\//, ''));
  if (byName) return byName;
  if (ref.length < 3) return null;
  return listRecords(dockerDir).find((r) => r.Id.startsWith(ref)) ?? null;
}

/** Removes a container's files (the caller has stopped its process). */
export function removeRecord(dockerDir: string, name: string): void {
  fs.rmSync(containerDir(dockerDir, name), { recursive: true, force: true });
}

/** Images "pulled" on the node. */
export function readImages(dockerDir: string): string[] {
  try {
    return JSON.parse(fs.readFileSync(path.join(dockerDir, 'images.json'), 'utf8')) as string[];
  } catch {
    return [];
  }
}

/** Replaces the node's image list. */
export function writeImages(dockerDir: string, images: string[]): void {
  fs.mkdirSync(dockerDir, { recursive: true });
  fs.writeFileSync(path.join(dockerDir, 'images.json'), JSON.stringify(images));
}

/** Volumes on the node (only their names matter: `docker inspect NAME` finds one named like a container). */
export function readVolumes(dockerDir: string): string[] {
  try {
    return JSON.parse(fs.readFileSync(path.join(dockerDir, 'volumes.json'), 'utf8')) as string[];
  } catch {
    return [];
  }
}

/** Replaces the node's volume list. */
export function writeVolumes(dockerDir: string, volumes: string[]): void {
  fs.mkdirSync(dockerDir, { recursive: true });
  fs.writeFileSync(path.join(dockerDir, 'volumes.json'), JSON.stringify(volumes));
}
