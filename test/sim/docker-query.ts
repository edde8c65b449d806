/** The read-only docker subcommands of the simulator: ps, inspect, logs. */
import fs from 'node:fs';
import path from 'node:path';
import { DockerExit, noSuch, takeAll, takeFlag, takeOption } from './docker-args.js';
import { psRow, renderTemplate } from './docker-format.js';
import type { ContainerRecord } from './docker-state.js';
import { findRecord, listRecords } from './docker-state.js';

function filterMatch(rec: ContainerRecord, filter: string): boolean {
  const [key, value = ''] = filter.split(/=(.*)/s) as [string, string?];
  if (key === 'name') return new RegExp(value).test(rec.Name) || new RegExp(value).test(rec.Name.slice(1));
  if (key === 'status') return rec.State.Status === value;
  if (key === 'id') return rec.Id.startsWith(value);
  if (key === 'ancestor') return rec.Config.Image === value;
  throw new DockerExit(`invalid filter '${key}' (pulse docker simulator supports name, status, id, ancestor)`, 125);
}

/** `docker ps`. */
export function ps(dockerDir: string, args: string[]): number {
  const all = takeFlag(args, ['-a', '--all']);
  const quiet = takeFlag(args, ['-q', '--quiet']);
  takeFlag(args, ['--no-trunc']);
  const filters = takeAll(args, ['--filter', '-f']);
  const format = takeOption(args, ['--format']);
  if (args.length) throw new DockerExit(`docker ps: unsupported arguments: ${args.join(' ')}`, 125);
  const recs = listRecords(dockerDir).filter((r) => (all || r.State.Running) && filters.every((f) => filterMatch(r, f)));
  const rows = recs.map((r) => psRow(r));
  if (quiet) rows.forEach((r) => console.log(r.ID));
  else if (format !== undefined) rows.forEach((r) => console.log(renderTemplate(format, r, true)));
  else {
    console.log('CONTAINER ID   IMAGE   COMMAND   CREATED   STATUS   PORTS   NAMES');
    rows.forEach((r) => console.log([r.ID, r.Image, r.Command, r.RunningFor, r.Status, r.Ports, r.Names].join('   ')));
  }
  return 0;
}

/** `docker inspect` / `docker container inspect`. */
export function inspect(dockerDir: string, args: string[], kind: 'object' | 'container'): number {
  const format = takeOption(args, ['--format', '-f']);
  takeOption(args, ['--type']);
  takeFlag(args, ['-s', '--size']);
  if (!args.length) throw new DockerExit('"docker inspect" requires at least 1 argument.', 1);
  const found: ContainerRecord[] = [];
  let missing = false;
  for (const ref of args) {
    const rec = findRecord(dockerDir, ref);
    if (rec) found.push(rec);
    else {
      missing = true;
      process.stderr.write(`Error: No such ${kind}: ${ref}\n`);
    }
  }
  // Like the docker CLI: `--format json` is compact JSON; a template with nothing found still prints one empty line.
  if (format === 'json') console.log(JSON.stringify(found));
  else if (format) console.log(found.map((r) => renderTemplate(format, r)).join('\n'));
  else console.log(JSON.stringify(found, null, 4));
  return missing ? 1 : 0;
}

/** `docker logs` (stdout and stderr lines go back to their own streams). */
export function logs(dockerDir: string, args: string[]): number {
  const tail = takeOption(args, ['--tail', '-n']);
  const timestamps = takeFlag(args, ['-t', '--timestamps']);
  if (takeFlag(args, ['-f', '--follow'])) throw new DockerExit('docker logs --follow is not simulated', 125);
  if (args.length !== 1) throw new DockerExit('"docker logs" requires exactly 1 argument.', 1);
  const rec = findRecord(dockerDir, args[0]!);
  if (!rec) throw noSuch(args[0]!);
  let lines = readLog(rec);
  if (tail !== undefined && tail !== 'all') lines = Number(tail) <= 0 ? [] : lines.slice(-Number(tail));
  for (const l of lines) (l.stream === 'stderr' ? process.stderr : process.stdout).write(`${timestamps ? `${l.time} ` : ''}${l.log}`);
  return 0;
}

interface LogLine {
  stream: 'stdout' | 'stderr';
  log: string;
  time: string;
}

/** The json-file log (what the app wrote) followed by raw process output (crash traces), like docker shows it. */
function readLog(rec: ContainerRecord): LogLine[] {
  const read = (f: string) => {
    try {
      return fs.readFileSync(f, 'utf8');
    } catch {
      return '';
    }
  };
  const lines = read(rec.LogPath)
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as LogLine);
  const raw = read(path.join(path.dirname(rec.LogPath), 'raw.log'));
  for (const l of raw.split('\n').filter((x) => x !== '')) lines.push({ stream: 'stderr', log: `${l}\n`, time: rec.State.FinishedAt });
  return lines;
}

