/**
 * `docker run` of the simulator: parses the flags scripts use, checks what the real daemon checks (image present,
 * name free, bind sources exist), and starts the container as a real detached process (the simulated vLLM for
 * `vllm serve ...`, any other command as itself).
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { appendJsonLine } from './control.js';
import { DockerExit } from './docker-args.js';
import { hasImage } from './docker-image.js';
import type { ContainerRecord, MountRecord } from './docker-state.js';
import { containerDir, dockerNow, loadRecord, readImages, removeRecord, reserveName, saveRecord, ZERO_TIME } from './docker-state.js';
import { SIM_DIST } from './paths.js';

const VALUE_FLAGS = new Set([
  '--name', '-e', '--env', '-v', '--volume', '-p', '--publish', '--network', '--net', '--gpus', '--ipc',
  '--shm-size', '--restart', '--ulimit', '--entrypoint', '-w', '--workdir', '-u', '--user', '-l', '--label',
  '--runtime', '--log-opt', '--log-driver', '--cpus', '-m', '--memory', '--env-file', '-h', '--hostname',
  '--pull', '--device', '--cap-add', '--security-opt', '--add-host',
]);
const BOOL_FLAGS = new Set(['-d', '--detach', '--rm', '-i', '-t', '-it', '-ti', '--privileged', '--init', '--interactive', '--tty']);

export interface RunSpec {
  name: string | null;
  detach: boolean;
  autoRemove: boolean;
  /** --restart no|always|unless-stopped|on-failure[:N] */
  restart: { Name: string; MaximumRetryCount: number };
  logDriver: string;
  logOpts: Record<string, string>;
  env: string[];
  volumes: string[];
  network: string;
  image: string;
  cmd: string[];
}

/** Parses `docker run` arguments (after `run`). */
export function parseRun(args: string[]): RunSpec {
  const spec: RunSpec = {
    name: null, detach: false, autoRemove: false, restart: { Name: 'no', MaximumRetryCount: 0 }, logDriver: '', logOpts: {},
    env: [], volumes: [], network: 'default', image: '', cmd: [],
  };
  let i = 0;
  for (; i < args.length; i++) {
    let flag = args[i]!;
    if (!flag.startsWith('-')) break;
    let value: string | undefined;
    const eq = flag.indexOf('=');
    if (flag.startsWith('--') && eq > 0) [flag, value] = [flag.slice(0, eq), flag.slice(eq + 1)];
    if (BOOL_FLAGS.has(flag)) {
      if (flag === '-d' || flag === '--detach') spec.detach = true;
      if (flag === '--rm') spec.autoRemove = true;
      continue;
    }
    if (!VALUE_FLAGS.has(flag)) throw new DockerExit(`unknown flag: ${flag}\nSee 'docker run --help'.`, 125);
    value ??= args[++i];
    if (value === undefined) throw new DockerExit(`flag needs an argument: ${flag}`, 125);
    if (flag === '--name') spec.name = value;
    else if (flag === '-e' || flag === '--env') spec.env.push(value.includes('=') ? value : `${value}=${process.env[value] ?? ''}`);
    else if (flag === '-v' || flag === '--volume') spec.volumes.push(value);
    else if (flag === '--network' || flag === '--net') spec.network = value;
    else if (flag === '--restart') spec.restart = parseRestart(value);
    else if (flag === '--log-driver') spec.logDriver = value;
    else if (flag === '--log-opt') {
      const eq = value.indexOf('=');
      if (eq <= 0) throw new DockerExit(`docker: invalid log opt '${value}': must be key=value`, 125);
      spec.logOpts[value.slice(0, eq)] = value.slice(eq + 1);
    }
  }
  if (i >= args.length) throw new DockerExit('"docker run" requires at least 1 argument.', 125);
  spec.image = args[i]!;
  spec.cmd = args.slice(i + 1);
  return spec;
}

/** `--restart` as the CLI parses it (opts.ParseRestartPolicy): on-failure may carry a maximum retry count. */
function parseRestart(value: string): RunSpec['restart'] {
  const [name = '', max] = value.split(':');
  if (!['no', 'always', 'unless-stopped', 'on-failure'].includes(name) || (max !== undefined && (name !== 'on-failure' || !/^\d+$/.test(max)))) {
    throw new DockerExit(`docker: invalid restart policy: ${value}`, 125);
  }
  return { Name: name, MaximumRetryCount: Number(max ?? 0) };
}

/** The daemon's default log config (daemon.json log-driver / log-opts; json-file without options when absent). */
function daemonLogConfig(dockerDir: string): { Type: string; Config: Record<string, string> } {
  try {
    const d = JSON.parse(fs.readFileSync(path.join(dockerDir, 'daemon.json'), 'utf8')) as { 'log-driver'?: string; 'log-opts'?: Record<string, string> };
    return { Type: d['log-driver'] ?? 'json-file', Config: { ...(d['log-opts'] ?? {}) } };
  } catch {
    return { Type: 'json-file', Config: {} };
  }
}

/** mergeAndVerifyLogConfig (moby daemon/logs.go): the daemon's options fill in what the container did not set. */
function mergeLogConfig(dockerDir: string, spec: RunSpec): { Type: string; Config: Record<string, string> } {
  const daemon = daemonLogConfig(dockerDir);
  const type = spec.logDriver || daemon.Type;
  const merged: Record<string, string> = type === daemon.Type ? { ...daemon.Config, ...spec.logOpts } : { ...spec.logOpts };
  // Go's encoding/json writes map keys sorted, so `{{json .HostConfig.LogConfig}}` shows them sorted.
  return { Type: type, Config: Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b))) };
}

/** Turns `-v SRC:DST[:ro|rw]` into a mount; a missing absolute source fails like a bind mount does. */
export function parseVolume(spec: string): MountRecord {
  const parts = spec.split(':');
  if (parts.length < 2 || parts.length > 3 || !parts[1]) throw new DockerExit(`invalid volume specification: '${spec}'`, 125);
  const [src, dst, mode = ''] = parts as [string, string, string?];
  if (mode && !/^(ro|rw|z|Z)(,(ro|rw|z|Z))*$/.test(mode)) throw new DockerExit(`invalid mode: ${mode}`, 125);
  if (!dst.startsWith('/')) throw new DockerExit(`invalid volume specification: '${spec}': destination must be absolute`, 125);
  const bind = src.startsWith('/');
  if (bind && !fs.existsSync(src)) {
    throw new DockerExit(`docker: Error response from daemon: invalid mount config for type "bind": bind source path does not exist: ${src}`, 125);
  }
  return { Type: bind ? 'bind' : 'volume', Source: src, Destination: dst, Mode: mode, RW: !mode.split(',').includes('ro'), Propagation: bind ? 'rprivate' : '' };
}

const IMAGE_ENV = ['PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'NVIDIA_VISIBLE_DEVICES=all'];

/** Runs `docker run`; prints the id (detached) or the command's output (foreground). Returns the exit code. */
export async function dockerRun(dockerDir: string, stateDir: string, args: string[]): Promise<number> {
  const spec = parseRun(args);
  const mounts = spec.volumes.map(parseVolume);
  if (!hasImage(readImages(dockerDir), spec.image)) {
    throw new DockerExit(
      `Unable to find image '${spec.image}' locally\ndocker: Error response from daemon: pull access denied for ${spec.image.split(':')[0]}, repository does not exist or may require 'docker login'.`,
      125,
    );
  }
  const id = crypto.randomBytes(32).toString('hex');
  const name = spec.name ?? `sim_${id.slice(0, 8)}`;
  if (!reserveName(dockerDir, name)) {
    const holder = loadRecord(dockerDir, name)?.Id ?? '';
    throw new DockerExit(
      `docker: Error response from daemon: Conflict. The container name "/${name}" is already in use by container "${holder}". You have to remove (or rename) that container to be able to reuse that name.`,
      125,
    );
  }
  const rec = newRecord(dockerDir, id, name, spec, mounts);
  if (!spec.detach) return runForeground(dockerDir, stateDir, rec, spec);
  // Like the daemon: the container exists (created) before its task starts; the monitor starts the process.
  saveRecord(dockerDir, rec);
  startMonitor(dockerDir, stateDir, rec);
  if (!(await waitStarted(dockerDir, name))) throw new DockerExit(`docker: Error response from daemon: failed to start container ${id}`, 125);
  process.stdout.write(`${id}\n`);
  return 0;
}

/** docker run -d returns once the task runs (State.Pid set) or already ended. */
async function waitStarted(dockerDir: string, name: string): Promise<boolean> {
  for (let i = 0; i < 400; i++) {
    const rec = loadRecord(dockerDir, name);
    if (!rec) return true; // --rm and already gone
    if (rec.State.Pid > 0 || !rec.State.StartedAt.startsWith('0001-')) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

function newRecord(dockerDir: string, id: string, name: string, spec: RunSpec, mounts: MountRecord[]): ContainerRecord {
  const now = dockerNow();
  return {
    Id: id,
    Name: `/${name}`,
    Created: now,
    Path: spec.cmd[0] ?? '',
    Args: spec.cmd.slice(1),
    State: { Status: 'created', Running: false, Paused: false, Restarting: false, OOMKilled: false, Dead: false, Pid: 0, ExitCode: 0, Error: '', StartedAt: ZERO_TIME, FinishedAt: ZERO_TIME },
    Image: `sha256:${crypto.createHash('sha256').update(spec.image).digest('hex')}`,
    LogPath: path.join(containerDir(dockerDir, name), 'log.jsonl'),
    RestartCount: 0,
    HostConfig: {
      Binds: spec.volumes, NetworkMode: spec.network, AutoRemove: spec.autoRemove, PortBindings: {},
      RestartPolicy: spec.restart, LogConfig: mergeLogConfig(dockerDir, spec),
    },
    Mounts: mounts,
    Config: { Hostname: id.slice(0, 12), Image: spec.image, Env: [...IMAGE_ENV, ...spec.env], Cmd: spec.cmd, Labels: {} },
  };
}

/** The environment of a container process: the image env plus --env, and the sim variables. */
export function containerEnv(rec: ContainerRecord, stateDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const kv of rec.Config.Env) {
    const eq = kv.indexOf('=');
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  env.PATH = process.env.PATH;
  env.SIM_CONTAINER_DIR = path.dirname(rec.LogPath);
  env.SIM_STATE = stateDir;
  return env;
}

/** Starts the container's monitor (docker-shim.js) in its own session; it starts and watches the process. */
function startMonitor(dockerDir: string, stateDir: string, rec: ContainerRecord): void {
  const child = spawn(process.execPath, [path.join(SIM_DIST, 'docker-shim.js'), dockerDir, rec.Name.slice(1), rec.Id], {
    detached: true, stdio: 'ignore', env: { ...process.env, SIM_STATE: stateDir }, cwd: '/',
  });
  child.unref();
}

/** A foreground run (e.g. the GPU probe): runs the command, prints its output, records the call. */
function runForeground(dockerDir: string, stateDir: string, rec: ContainerRecord, spec: RunSpec): number {
  appendJsonLine(path.join(stateDir, 'gpu-probe-calls.jsonl'), { at: rec.Created, image: spec.image, cmd: spec.cmd });
  const [cmd, ...rest] = spec.cmd;
  const env = { ...containerEnv(rec, stateDir), SIM_IN_CONTAINER: '1' };
  const r =
    cmd === 'nvidia-smi'
      ? spawnSync(process.execPath, [path.join(SIM_DIST, 'nvidia-smi.js'), ...rest], { stdio: 'inherit', env })
      : spawnSync(cmd ?? 'true', rest, { stdio: 'inherit', env });
  // A command that cannot be started fails the task's creation (docker/cli run.go: 126 cannot invoke, 127 not found).
  const missing = (r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
  if (missing) process.stderr.write(`docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: "${cmd}": executable file not found in $PATH: unknown\n`);
  const code = missing ? 127 : r.error ? 126 : (r.status ?? 137);
  rec.State = { ...rec.State, Status: 'exited', Running: false, ExitCode: code, StartedAt: rec.Created, FinishedAt: dockerNow() };
  if (spec.autoRemove) removeRecord(dockerDir, rec.Name.slice(1));
  else saveRecord(dockerDir, rec);
  return code;
}
