/**
 * `docker exec` of the simulator, as moby daemon/exec.go (getActiveContainer, ContainerExecCreate/Start) and docker/cli
 * cli/command/container/exec.go do it: the container must run (not paused, not restarting), else the daemon answers
 * and the CLI exits 1; a command that is not on the container's PATH fails "OCI runtime exec failed" with 126;
 * otherwise the exit code is the command's. The command runs with the container's environment and, as in a real
 * container, sees only the container's processes: the simulated containers share the node's pid namespace, so the
 * command gets a private mount namespace whose /proc holds only the container's init (State.Pid) and the processes
 * below it, each the real /proc/PID (a tmpfs with those entries bind-mounted, plus /proc/net). Root inside the real
 * container reads those processes' fds; so does this command (the sim runs as root).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DockerExit, noSuch } from './docker-args.js';
import { containerEnv } from './docker-run.js';
import { findRecord } from './docker-state.js';

const BOOL = new Set(['-i', '--interactive', '-t', '--tty', '-it', '-ti', '-d', '--detach', '--privileged']);
const VALUE = new Set(['-e', '--env', '-u', '--user', '-w', '--workdir', '--env-file', '--detach-keys']);

/** The container's init and every process below it (ppid links of /proc/PID/stat). */
export function containerPids(init: number): number[] {
  const kids = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* gone meanwhile */
    }
  }
  const out = [init];
  for (let i = 0; i < out.length; i++) out.push(...(kids.get(out[i]!) ?? []).filter((p) => !out.includes(p)));
  return out;
}

function onPath(cmd: string, pathVar: string | undefined): boolean {
  if (cmd.includes('/')) return fs.existsSync(cmd);
  return (pathVar ?? '').split(':').some((dir) => dir !== '' && fs.existsSync(path.join(dir, cmd)));
}

// $1 the tmpfs mount point, $2 the pids (space-separated); the rest is the command.
const VIEW = `T=$1; P=$2; shift 2
mount -t tmpfs sim-container-proc "$T" || exit 126
for p in $P; do [ -d "/proc/$p" ] && mkdir "$T/$p" && mount --bind "/proc/$p" "$T/$p"; done
mkdir "$T/net" && mount --bind /proc/net "$T/net"
mount --rbind "$T" /proc || exit 126
exec "$@"`;

/** `docker exec [OPTIONS] CONTAINER COMMAND [ARG...]`. */
export async function dockerExec(dockerDir: string, stateDir: string, args: string[]): Promise<number> {
  let i = 0;
  const extraEnv: string[] = [];
  for (; i < args.length && args[i]!.startsWith('-'); i++) {
    const [flag = '', inline] = args[i]!.split(/=(.*)/s, 2);
    if (BOOL.has(flag)) continue;
    if (!VALUE.has(flag)) throw new DockerExit(`unknown flag: ${flag}\nSee 'docker exec --help'.`, 125);
    const value = inline ?? args[++i];
    if (value === undefined) throw new DockerExit(`flag needs an argument: ${flag}`, 125);
    if (flag === '-e' || flag === '--env') extraEnv.push(value);
  }
  const [ref, ...cmd] = args.slice(i);
  if (!ref || cmd.length === 0) throw new DockerExit('"docker exec" requires at least 2 arguments.', 1);
  const rec = findRecord(dockerDir, ref);
  if (!rec) throw noSuch(ref);
  if (!rec.State.Running) throw new DockerExit(`Error response from daemon: container ${rec.Id} is not running`, 1);
  if (rec.State.Paused) throw new DockerExit(`Error response from daemon: Container ${ref} is paused, unpause the container before exec`, 1);
  if (rec.State.Restarting) throw new DockerExit(`Error response from daemon: Container ${rec.Id} is restarting, wait until the container is running`, 1);
  const env = containerEnv(rec, stateDir);
  for (const kv of extraEnv) env[kv.split('=')[0]!] = kv.includes('=') ? kv.slice(kv.indexOf('=') + 1) : process.env[kv];
  if (!onPath(cmd[0]!, env.PATH)) {
    throw new DockerExit(`OCI runtime exec failed: exec failed: unable to start container process: exec: "${cmd[0]}": executable file not found in $PATH: unknown`, 126);
  }
  const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'sim-exec-proc-'));
  try {
    const pids = containerPids(rec.State.Pid).join(' ');
    const child = spawn('unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', VIEW, 'sh', mnt, pids, ...cmd], { stdio: 'inherit', env, cwd: '/' });
    return await new Promise<number>((resolve) => {
      child.once('error', () => resolve(126));
      child.once('exit', (code, sig) => resolve(code ?? 128 + (sig ? (os.constants.signals[sig] ?? 9) : 9)));
    });
  } finally {
    fs.rmdirSync(mnt); // empty on the node: the tmpfs was mounted only in the command's own mount namespace
  }
}
