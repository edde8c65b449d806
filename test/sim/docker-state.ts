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

export interface ContainerState {
  Status: 'created' | 'running' | 'exited';
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
  HostConfig: { Binds: string[]; NetworkMode: string; AutoRemove: boolean; PortBindings: Record<string, unknown> };
  Mounts: MountRecord[];
  Config: { Hostname: string; Image: string; Env: string[]; Cmd: string[]; Labels: Record<string, string> };
}

/** Now in docker's time format: RFC 3339 with nanoseconds (`2026-12-02T09:20:05.123456789Z`). */
export function dockerNow(): string {
  const extra = String(process.hrtime()[1] % 1_000_000).padStart(6, '0');
  return new Date().toISOString().replace(/Z$/, `${extra}Z`);
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

/**
 * Reads one container record, marking it exited when its process is gone (exit code from exit.json or 137).
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
  if (rec.State.Running && !processAlive(rec.State.Pid, rec.Id)) {
    const exit = readExit(dir);
    rec.State = {
      ...rec.State,
      Status: 'exited',
      Running: false,
      Pid: 0,
      ExitCode: exit?.code ?? 137,
      FinishedAt: exit?.at ?? dockerNow(),
    };
    if (persist) saveRecord(dockerDir, rec);
  }
  return rec;
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
