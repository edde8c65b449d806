/**
 * `docker logs [--tail N] [-t] [-f] NAME` of the simulator. As moby's daemon/logs.go: a driver that keeps nothing
 * (`none`) cannot be read; `--follow` streams only while the container's logger is live, so a container that does
 * not run prints what it logged and ends at once (moby reads it with a logger it creates for the call, and
 * `follow := config.Follow && !cLogCreated`); a followed log ends when the container stops. stdout and stderr lines
 * go back to their own streams.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DockerExit, noSuch, takeFlag, takeOption } from './docker-args.js';
import type { ContainerRecord } from './docker-state.js';
import { findRecord, loadRecord } from './docker-state.js';

interface LogLine {
  stream: 'stdout' | 'stderr';
  log: string;
  time: string;
}

/**
 * A follow reads new lines when the log file changes (moby's json-file reader waits on file events, so a line is
 * followed within milliseconds) and at least this often (the container's state: a stopped one ends the follow).
 */
const FOLLOW_POLL_MS = 100;

/** Resolves on the next change of `file` or after `ms`, whichever comes first. */
function changeOrAfter(watcher: fs.FSWatcher | null, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(t);
      watcher?.off('change', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    watcher?.once('change', done);
  });
}

function watch(file: string): fs.FSWatcher | null {
  try {
    const w = fs.watch(file, { persistent: false });
    w.on('error', () => undefined);
    return w;
  } catch {
    return null; // not there yet: the poll reads it
  }
}

function read(f: string): string {
  try {
    return fs.readFileSync(f, 'utf8');
  } catch {
    return '';
  }
}

/** The json-file log (what the app wrote), then raw process output (crash traces), as two counted parts. */
function readParts(rec: ContainerRecord): { json: LogLine[]; raw: LogLine[] } {
  const json = read(rec.LogPath)
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as LogLine);
  const raw = read(path.join(path.dirname(rec.LogPath), 'raw.log'))
    .split('\n')
    .filter((x) => x !== '')
    .map((l): LogLine => ({ stream: 'stderr', log: `${l}\n`, time: rec.State.FinishedAt }));
  return { json, raw };
}

export async function logs(dockerDir: string, args: string[]): Promise<number> {
  const tail = takeOption(args, ['--tail', '-n']);
  const timestamps = takeFlag(args, ['-t', '--timestamps']);
  const follow = takeFlag(args, ['-f', '--follow']);
  if (args.length !== 1) throw new DockerExit('"docker logs" requires exactly 1 argument.', 1);
  const rec = findRecord(dockerDir, args[0]!);
  if (!rec) throw noSuch(args[0]!);
  // A driver that keeps nothing to read (moby daemon/logger: ErrReadLogsNotSupported).
  if (rec.HostConfig.LogConfig.Type === 'none') throw new DockerExit('Error response from daemon: configured logging driver does not support reading', 1);
  const write = (l: LogLine): void => void (l.stream === 'stderr' ? process.stderr : process.stdout).write(`${timestamps ? `${l.time} ` : ''}${l.log}`);
  const first = readParts(rec);
  let lines = [...first.json, ...first.raw];
  if (tail !== undefined && tail !== 'all') lines = Number(tail) <= 0 ? [] : lines.slice(-Number(tail));
  lines.forEach(write);
  if (!follow || !rec.State.Running) return 0;
  let seen = { json: first.json.length, raw: first.raw.length };
  const name = rec.Name.replace(/^\//, '');
  const watcher = watch(rec.LogPath);
  for (;;) {
    await changeOrAfter(watcher, FOLLOW_POLL_MS);
    const now = loadRecord(dockerDir, name, false);
    const parts = now && now.Id === rec.Id ? readParts(now) : { json: [], raw: [] };
    parts.json.slice(seen.json).forEach(write);
    parts.raw.slice(seen.raw).forEach(write);
    seen = { json: Math.max(seen.json, parts.json.length), raw: Math.max(seen.raw, parts.raw.length) };
    if (!now || now.Id !== rec.Id || !now.State.Running) {
      watcher?.close();
      return 0;
    }
  }
}
