/**
 * One node's sshd: a real /usr/sbin/sshd -D in its own mount (and UTS: `hostname` is the node name) namespace, where
 * the sim's meminfo, watermark file and bin dir are bind-mounted over /proc/meminfo, /proc/sys/vm/watermark_scale_factor
 * and /usr/local/bin (so even `env -i bash` finds the node's docker, nvidia-smi and sudo on its default PATH), and the
 * node's dockerd socket over /var/run/docker.sock. The sshd is made a child subreaper, so orphans of its sessions
 * (setsid'd start.sh, the recipe's memory watchdog) are reaped instead of becoming zombies.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { NodePaths } from './paths.js';

export interface SshdSpec {
  name: string;
  address: string;
  port: number;
  paths: NodePaths;
  authorizedKeys: string;
  /** The node's dockerd socket, bind-mounted over /var/run/docker.sock in the node's namespace. */
  dockerSock: string;
  /** root's login shell on this node (spark2's is zsh): a passwd copy bind-mounted over /etc/passwd. */
  loginShell?: string | undefined;
}

/** PATH of every session: the sim tools first, then the real system. */
export function sessionPath(paths: NodePaths): string {
  return `${paths.binDir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
}

/** Writes the node's sshd_config (root login by key only, SetEnv with SHLVL=1 and the sim PATH). */
export function writeSshdConfig(spec: SshdSpec): string {
  const ssh = spec.paths.sshDir;
  const file = path.join(ssh, 'sshd_config');
  fs.writeFileSync(
    file,
    [
      `ListenAddress ${spec.address}:${spec.port}`,
      `HostKey ${path.join(ssh, 'ssh_host_ed25519_key')}`,
      `PidFile ${path.join(ssh, 'sshd.pid')}`,
      `AuthorizedKeysFile ${spec.authorizedKeys}`,
      'PermitRootLogin prohibit-password',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      // The sim dir lives under /tmp; StrictModes would reject its permissions.
      'StrictModes no',
      'PrintMotd no',
      'PrintLastLog no',
      'MaxStartups 100:30:200',
      'MaxSessions 100',
      'ClientAliveInterval 0',
      'LogLevel ERROR',
      `SetEnv SHLVL=1 PATH=${sessionPath(spec.paths)} PULSE_SIM_NODE=${spec.name}`,
      '',
    ].join('\n'),
  );
  return file;
}

// prctl(PR_SET_CHILD_SUBREAPER, 1) survives exec, so sshd itself becomes the subreaper (it reaps any child).
const PRCTL_SYSCALL = process.arch === 'arm64' ? 167 : 157;
const SUBREAPER_EXEC = `syscall(${PRCTL_SYSCALL}, 36, 1, 0, 0, 0) == 0 or die "prctl: $!"; exec { $ARGV[0] } @ARGV or die "exec: $!";`;

/** The ssh user's (root's) ~/.local/state/pulse as node scripts see it. */
const HOME_STATE = path.join(os.userInfo().homedir, '.local', 'state', 'pulse');

/** Starts the sshd in a new mount namespace; resolves once it accepts connections. */
export async function startSshd(spec: SshdSpec): Promise<ChildProcess> {
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const cfg = writeSshdConfig(spec);
  const p = spec.paths;
  const mounts = [
    `hostname ${spec.name}`,
    `mount --bind ${p.meminfo} /proc/meminfo`,
    `mount --bind ${p.watermark} /proc/sys/vm/watermark_scale_factor`,
    `mount --bind ${p.binDir} /usr/local/bin`,
    // The node's own dockerd answers where every docker client looks (the file is only the mount point).
    dockerSockMount(spec.dockerSock),
    // Each node has its own home state (the node lock lives there), as separate machines do.
    `mkdir -p ${HOME_STATE} && mount --bind ${p.homeState} ${HOME_STATE}`,
  ];
  if (spec.loginShell) mounts.push(passwdMount(spec.loginShell, p.state));
  const log = fs.openSync(path.join(p.sshDir, 'sshd.log'), 'a');
  const child = spawn(
    'unshare',
    ['--mount', '--uts', '--propagation', 'private', 'bash', '-c', `${mounts.join(' && ')} && exec perl -e '${SUBREAPER_EXEC}' /usr/sbin/sshd -D -e -f ${cfg}`],
    { stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  await waitListening(spec.address, spec.port, child, path.join(p.sshDir, 'sshd.log'));
  return child;
}

/** The command that bind-mounts a node's dockerd socket over /var/run/docker.sock (in the current namespace). */
export function dockerSockMount(sock: string): string {
  return `{ [ -e /var/run/docker.sock ] || : >/var/run/docker.sock; } && mount --bind '${sock}' /var/run/docker.sock`;
}

/** A copy of /etc/passwd with root's shell replaced, and the command that mounts it over the real one. */
function passwdMount(shell: string, stateDir: string): string {
  const file = path.join(stateDir, 'passwd');
  const text = fs.readFileSync('/etc/passwd', 'utf8').replace(/^(root(?::[^:\n]*){5}):[^:\n]*$/m, `$1:${shell}`);
  fs.writeFileSync(file, text);
  return `mount --bind ${file} /etc/passwd`;
}

async function waitListening(host: string, port: number, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`sim sshd on ${host}:${port} exited: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
    }
    if (await canConnect(host, port)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill('SIGKILL');
  throw new Error(`sim sshd on ${host}:${port} did not listen within 10 s`);
}

/** True when a TCP connection to host:port succeeds. */
export function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
