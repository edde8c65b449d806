/**
 * The simulated `docker` executable (installed per node as a shim that sets SIM_DOCKER_DIR and SIM_STATE).
 * Supports what the node scripts use; anything else exits 125 with a clear message, never a silent success.
 */
import fs from 'node:fs';
import path from 'node:path';
import { appendJsonLine } from './control.js';
import { renderTemplate, psRow, TemplateError } from './docker-format.js';
import type { ContainerRecord } from './docker-state.js';
import { dockerNow, findRecord, listRecords, processAlive, readImages, removeRecord, saveRecord } from './docker-state.js';
import { DockerExit, dockerRun } from './docker-run.js';
import { imageCommand } from './docker-image.js';

const dockerDir = process.env.SIM_DOCKER_DIR ?? '';
const stateDir = process.env.SIM_STATE ?? '';

function noSuch(ref: string): DockerExit {
  return new DockerExit(`Error response from daemon: No such container: ${ref}`, 1);
}

/** Pulls `--flag value` / `--flag=value` out of args; returns the value (last wins) or undefined. */
export function takeOption(args: string[], names: string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    if (a.startsWith('-') && eq > 0 && names.includes(a.slice(0, eq))) {
      value = a.slice(eq + 1);
      args.splice(i--, 1);
    } else if (names.includes(a)) {
      value = args[i + 1];
      args.splice(i--, 2);
    }
  }
  return value;
}

function takeAll(args: string[], names: string[]): string[] {
  const out: string[] = [];
  for (let v = takeOption(args, names); v !== undefined; v = takeOption(args, names)) out.push(v);
  return out;
}

function takeFlag(args: string[], names: string[]): boolean {
  const before = args.length;
  for (let i = args.length - 1; i >= 0; i--) if (names.includes(args[i]!)) args.splice(i, 1);
  return args.length !== before;
}

function filterMatch(rec: ContainerRecord, filter: string): boolean {
  const [key, value = ''] = filter.split(/=(.*)/s) as [string, string?];
  if (key === 'name') return new RegExp(value).test(rec.Name) || new RegExp(value).test(rec.Name.slice(1));
  if (key === 'status') return rec.State.Status === value;
  if (key === 'id') return rec.Id.startsWith(value);
  if (key === 'ancestor') return rec.Config.Image === value;
  throw new DockerExit(`invalid filter '${key}' (pulse docker simulator supports name, status, id, ancestor)`, 125);
}

function ps(args: string[]): number {
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

function inspect(args: string[], kind: 'object' | 'container'): number {
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

function logs(args: string[]): number {
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

async function waitGone(rec: ContainerRecord, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!processAlive(rec.State.Pid, rec.Id)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !processAlive(rec.State.Pid, rec.Id);
}

/** Signals the container's process group (it runs in its own session), like docker signals the whole cgroup. */
function signalContainer(pid: number, signal: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
      return;
    } catch {
      /* no such group: try the pid itself */
    }
  }
}

async function stopOne(rec: ContainerRecord, timeoutS: number, signal: NodeJS.Signals): Promise<void> {
  if (!rec.State.Running) return;
  signalContainer(rec.State.Pid, signal);
  if (!(await waitGone(rec, timeoutS * 1000))) {
    signalContainer(rec.State.Pid, 'SIGKILL');
    await waitGone(rec, 2000);
  }
  if (signal === 'SIGKILL' || !processAlive(rec.State.Pid, rec.Id)) signalContainer(rec.State.Pid, 'SIGKILL');
  const after = findRecord(dockerDir, rec.Id) ?? rec;
  if (after.State.Running) {
    after.State = { ...after.State, Status: 'exited', Running: false, Pid: 0, ExitCode: 137, FinishedAt: dockerNow() };
    saveRecord(dockerDir, after);
  }
}

async function stop(args: string[], kill: boolean): Promise<number> {
  const t = Number(takeOption(args, ['-t', '--time', '--timeout']) ?? 10);
  const sig = (takeOption(args, ['-s', '--signal']) ?? (kill ? 'SIGKILL' : 'SIGTERM')).replace(/^(?!SIG)/, 'SIG') as NodeJS.Signals;
  if (!args.length) throw new DockerExit(`"docker ${kill ? 'kill' : 'stop'}" requires at least 1 argument.`, 1);
  let code = 0;
  for (const ref of args) {
    const rec = findRecord(dockerDir, ref);
    if (!rec) {
      process.stderr.write(`Error response from daemon: No such container: ${ref}\n`);
      code = 1;
      continue;
    }
    await stopOne(rec, kill ? 0 : t, sig);
    console.log(ref);
  }
  return code;
}

async function rm(args: string[]): Promise<number> {
  const force = takeFlag(args, ['-f', '--force']);
  takeFlag(args, ['-v', '--volumes']);
  if (!args.length) throw new DockerExit('"docker rm" requires at least 1 argument.', 1);
  let code = 0;
  for (const ref of args) {
    const rec = findRecord(dockerDir, ref);
    if (!rec) {
      // Since docker 23 the CLI ignores "no such container" with --force.
      if (!force) {
        process.stderr.write(`Error response from daemon: No such container: ${ref}\n`);
        code = 1;
      }
      continue;
    }
    if (rec.State.Running && !force) {
      process.stderr.write(`Error response from daemon: cannot remove container "${rec.Name}": container is running: stop the container before removing or force remove\n`);
      code = 1;
      continue;
    }
    if (rec.State.Running) await stopOne(rec, 0, 'SIGKILL');
    removeRecord(dockerDir, rec.Name.slice(1));
    console.log(ref);
  }
  return code;
}

async function dispatch(argv: string[]): Promise<number> {
  const [cmd = '', ...args] = argv;
  switch (cmd) {
    case 'run':
      return dockerRun(dockerDir, stateDir, args);
    case 'ps':
      return ps(args);
    case 'inspect':
      return inspect(args, 'object');
    case 'logs':
      return logs(args);
    case 'rm':
      return rm(args);
    case 'stop':
      return stop(args, false);
    case 'kill':
      return stop(args, true);
    case 'container':
      return dispatch(args[0] === 'ls' ? ['ps', ...args.slice(1)] : args[0] === 'inspect' ? ['container-inspect', ...args.slice(1)] : args);
    case 'container-inspect':
      return inspect(args, 'container');
    case 'image':
    case 'images':
      return imageCommand(readImages(dockerDir), cmd === 'images' ? ['ls', ...args] : args);
    case 'version':
      console.log(takeOption(args, ['--format', '-f']) ? '28.3.3' : 'Client: 28.3.3 (pulse simulator)\nServer: 28.3.3 (pulse simulator)');
      return 0;
    default:
      throw new DockerExit(`docker: '${argv.join(' ')}' is not supported by the pulse docker simulator`, 125);
  }
}

/** Entry point: runs one docker command and exits with docker's exit code. */
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (stateDir) appendJsonLine(path.join(stateDir, 'docker-calls.jsonl'), { at: new Date().toISOString(), argv });
  try {
    process.exitCode = await dispatch(argv);
  } catch (err) {
    if (err instanceof DockerExit || err instanceof TemplateError) {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = err instanceof DockerExit ? err.code : 1;
    } else throw err;
  }
}

await main();
