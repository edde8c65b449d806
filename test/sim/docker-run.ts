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
import type { ContainerRecord, MountRecord } from './docker-state.js';
import { containerDir, dockerNow, readImages, removeRecord, reserveName, saveRecord, ZERO_TIME } from './docker-state.js';
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
  env: string[];
  volumes: string[];
  network: string;
  image: string;
  cmd: string[];
}

/** Parses `docker run` arguments (after `run`). */
export function parseRun(args: string[]): RunSpec {
  const spec: RunSpec = { name: null, detach: false, autoRemove: false, env: [], volumes: [], network: 'default', image: '', cmd: [] };
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
  }
  if (i >= args.length) throw new DockerExit('"docker run" requires at least 1 argument.', 125);
  spec.image = args[i]!;
  spec.cmd = args.slice(i + 1);
  return spec;
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
export function dockerRun(dockerDir: string, stateDir: string, args: string[]): number {
  const spec = parseRun(args);
  const mounts = spec.volumes.map(parseVolume);
  if (!readImages(dockerDir).includes(spec.image)) {
    throw new DockerExit(
      `Unable to find image '${spec.image}' locally\ndocker: Error response from daemon: pull access denied for ${spec.image.split(':')[0]}, repository does not exist or may require 'docker login'.`,
      125,
    );
  }
  const id = crypto.randomBytes(32).toString('hex');
  const name = spec.name ?? `sim_${id.slice(0, 8)}`;
  if (!reserveName(dockerDir, name)) {
    throw new DockerExit(
      `docker: Error response from daemon: Conflict. The container name "/${name}" is already in use by container "${id}". You have to remove (or rename) that container to be able to reuse that name.`,
      125,
    );
  }
  const rec = newRecord(dockerDir, id, name, spec, mounts);
  if (!spec.detach) return runForeground(dockerDir, stateDir, rec, spec);
  rec.State.Pid = startProcess(dockerDir, stateDir, rec);
  saveRecord(dockerDir, rec);
  process.stdout.write(`${id}\n`);
  return 0;
}

function newRecord(dockerDir: string, id: string, name: string, spec: RunSpec, mounts: MountRecord[]): ContainerRecord {
  const now = dockerNow();
  return {
    Id: id,
    Name: `/${name}`,
    Created: now,
    Path: spec.cmd[0] ?? '',
    Args: spec.cmd.slice(1),
    State: { Status: 'running', Running: true, Paused: false, Restarting: false, OOMKilled: false, Dead: false, Pid: 0, ExitCode: 0, Error: '', StartedAt: now, FinishedAt: ZERO_TIME },
    Image: `sha256:${crypto.createHash('sha256').update(spec.image).digest('hex')}`,
    LogPath: path.join(containerDir(dockerDir, name), 'log.jsonl'),
    HostConfig: { Binds: spec.volumes, NetworkMode: spec.network, AutoRemove: spec.autoRemove, PortBindings: {} },
    Mounts: mounts,
    Config: { Hostname: id.slice(0, 12), Image: spec.image, Env: [...IMAGE_ENV, ...spec.env], Cmd: spec.cmd, Labels: {} },
  };
}

function containerEnv(rec: ContainerRecord, stateDir: string): NodeJS.ProcessEnv {
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

/** Starts the container process in its own session, detached from the caller; stdio goes to raw.log. */
function startProcess(dockerDir: string, stateDir: string, rec: ContainerRecord): number {
  const dir = containerDir(dockerDir, rec.Name.slice(1));
  const out = fs.openSync(path.join(dir, 'raw.log'), 'a');
  const [cmd, ...rest] = rec.Config.Cmd;
  const argv = cmd === 'vllm' ? [path.join(SIM_DIST, 'vllm.js'), `--sim-id=${rec.Id}`, ...rest] : ['-e', KEEP_ALIVE, rec.Id, ...rec.Config.Cmd];
  const child = spawn(process.execPath, argv, { detached: true, stdio: ['ignore', out, out], env: containerEnv(rec, stateDir), cwd: '/' });
  child.unref();
  fs.closeSync(out);
  return child.pid ?? 0;
}

// Any non-vLLM detached command runs for real under a node wrapper that carries the container id in its argv,
// records the exit code like the vLLM sim does, and passes stop signals on (kill of the group ends both).
const KEEP_ALIVE = `const c=require('child_process').spawn(process.argv[2],process.argv.slice(3),{stdio:'inherit'});
const fin=(code)=>{require('fs').writeFileSync(process.env.SIM_CONTAINER_DIR+'/exit.json',JSON.stringify({code,at:new Date().toISOString().replace(/Z$/,'000000Z')}));process.exit(code);};
c.on('error',()=>fin(127));c.on('exit',(code,sig)=>fin(code??(sig==='SIGKILL'?137:143)));
for(const s of ['SIGTERM','SIGINT'])process.on(s,()=>c.kill(s));`;

/** A foreground run (e.g. the GPU probe): runs the command, prints its output, records the call. */
function runForeground(dockerDir: string, stateDir: string, rec: ContainerRecord, spec: RunSpec): number {
  appendJsonLine(path.join(stateDir, 'gpu-probe-calls.jsonl'), { at: rec.Created, image: spec.image, cmd: spec.cmd });
  const [cmd, ...rest] = spec.cmd;
  const env = { ...containerEnv(rec, stateDir), SIM_IN_CONTAINER: '1' };
  const r =
    cmd === 'nvidia-smi'
      ? spawnSync(process.execPath, [path.join(SIM_DIST, 'nvidia-smi.js'), ...rest], { stdio: 'inherit', env })
      : spawnSync(cmd ?? 'true', rest, { stdio: 'inherit', env });
  const code = r.status ?? 137;
  rec.State = { ...rec.State, Status: 'exited', Running: false, ExitCode: code, FinishedAt: dockerNow() };
  if (spec.autoRemove) removeRecord(dockerDir, rec.Name.slice(1));
  else saveRecord(dockerDir, rec);
  return code;
}
