/**
 * The Docker engine of one simulated node: a real dockerd (Debian's docker.io, 20.10) with its own data root, exec
 * root, socket and pid file, no bridge and no iptables (the recipe runs its containers with `--network host`), and
 * its own supervised containerd. It runs in a private mount namespace of its own, so the overlay and shm mounts of
 * its containers never show on the test machine and vanish with it.
 *
 * Everything it starts is tracked by cgroup, not by name: the daemon (dockerd, containerd, the shims) is moved into
 * the pids cgroup `/pulse-sim/<key>/engine` before it execs, and its containers get `--cgroup-parent
 * /pulse-sim/<key>` (moby's cgroupfs driver makes `/pulse-sim/<key>/<id>` in every hierarchy). `killEngine(key)`
 * SIGKILLs every process under `/pulse-sim/<key>` and removes the cgroups: the stop of a node, the exit hook and the
 * reaper of a SIGKILLed test process all use it. See docs/SIMULATOR.md, "The Docker engine".
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { killUntilGone } from './procs.js';

/** The root of the cgroup hierarchies (cgroup v1 here: one per controller; v2: one unified tree). */
const CGROUP_ROOT = '/sys/fs/cgroup';

/** dockerd of the machine (scripts/setup.sh installs Debian's docker.io when it is missing). */
export const DOCKERD = ['/usr/sbin/dockerd', '/usr/bin/dockerd'].find((p) => fs.existsSync(p)) ?? 'dockerd';

/**
 * The docker client the nodes run: the machine's own 28.x client where it exists (a DGX Spark runs Docker 28), else
 * Debian's 20.10 client. It talks to the 20.10 daemon with API 1.41 (the client negotiates the version down).
 */
export const DOCKER_CLIENT = ['/usr/local/bin/docker', '/usr/bin/docker'].find((p) => fs.existsSync(p)) ?? 'docker';

/** Where the engine of one node keeps its things (under the node's docker dir). */
export interface EnginePaths {
  dir: string;
  data: string;
  exec: string;
  sock: string;
  pidfile: string;
  log: string;
  /** daemon.json (--config-file): log driver and options (setDaemonLogConfig). */
  config: string;
}

export function enginePaths(dockerDir: string): EnginePaths {
  return {
    dir: dockerDir,
    data: path.join(dockerDir, 'data'),
    exec: path.join(dockerDir, 'exec'),
    sock: path.join(dockerDir, 'docker.sock'),
    pidfile: path.join(dockerDir, 'dockerd.pid'),
    log: path.join(dockerDir, 'dockerd.log'),
    config: path.join(dockerDir, 'daemon.json'),
  };
}

/** The cgroup path (relative to a hierarchy's root) of a node's engine and containers: `pulse-sim/<sim>-<node>`. */
export function cgroupKey(simDir: string, node: string): string {
  return `pulse-sim/${path.basename(simDir)}-${node}`;
}

/** Every hierarchy root that tracks processes: the pids controller on v1, the unified tree on v2. */
function hierarchies(): string[] {
  const v1 = path.join(CGROUP_ROOT, 'pids');
  if (fs.existsSync(path.join(v1, 'cgroup.procs'))) return [v1];
  return [CGROUP_ROOT];
}

/** Every cgroup dir under `key` in every mounted hierarchy, deepest first (the order rmdir needs). */
function cgroupDirs(key: string): string[] {
  const out: string[] = [];
  let roots: string[];
  try {
    roots = fs.readdirSync(CGROUP_ROOT).map((h) => path.join(CGROUP_ROOT, h));
  } catch {
    return out;
  }
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name));
    out.push(dir);
  };
  for (const r of [CGROUP_ROOT, ...roots]) {
    const d = path.join(r, key);
    if (fs.existsSync(d)) walk(d);
  }
  return [...new Set(out)];
}

/** Pids in any cgroup under `key` (the engine's daemons and every container process of the node). */
export function enginePids(key: string): number[] {
  const pids = new Set<number>();
  for (const dir of cgroupDirs(key)) {
    try {
      for (const l of fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n')) if (/^\d+$/.test(l)) pids.add(Number(l));
    } catch {
      /* gone */
    }
  }
  return [...pids];
}

/**
 * SIGKILLs every process under the cgroup `key` until none is left, then removes the cgroups (synchronous: it also
 * runs in process.on('exit')). Safe when nothing is there.
 */
export function killEngine(key: string): number[] {
  killUntilGone(() => enginePids(key), 50);
  for (const dir of cgroupDirs(key)) {
    try {
      fs.rmdirSync(dir);
    } catch {
      /* busy (a process still leaving) or gone */
    }
  }
  return enginePids(key);
}

/**
 * Engine cgroups (`pulse-sim/<sim>-<node>`) whose dockerd is gone or runs on a data root that no longer exists: what
 * is left of a sim whose test process died and whose dir was removed.
 */
export function engineOrphans(): string[] {
  const out: string[] = [];
  for (const h of hierarchies()) {
    let names: string[];
    try {
      names = fs.readdirSync(path.join(h, 'pulse-sim'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    } catch {
      continue;
    }
    for (const name of names) {
      const key = `pulse-sim/${name}`;
      const roots = enginePids(key).flatMap((pid) => {
        try {
          const arg = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').find((a) => a.startsWith('--data-root='));
          return arg ? [arg.slice('--data-root='.length)] : [];
        } catch {
          return [];
        }
      });
      if (roots.length === 0 ? enginePids(key).length > 0 : roots.every((r) => !fs.existsSync(r))) out.push(key);
    }
  }
  return [...new Set(out)];
}

/** The daemon of one node. */
export class Engine {
  private child: ChildProcess | null = null;
  private thawTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly paths: EnginePaths,
    /** The node's cgroup path (cgroupKey). */
    readonly key: string,
    /** PATH of dockerd: the node's bin dir first (nvidia-container-runtime-hook, so moby registers its GPU driver). */
    private readonly pathEnv: string,
    /** Extra environment of dockerd (its prestart hooks inherit it: moby passes os.Environ() to the nvidia hook). */
    private readonly env: Record<string, string>,
  ) {}

  /** The daemon's pid (0 when it does not run). */
  get pid(): number {
    return this.child && this.child.exitCode === null && this.child.signalCode === null ? (this.child.pid ?? 0) : 0;
  }

  /** Starts dockerd and resolves once it answers on its socket. */
  async start(): Promise<void> {
    if (this.pid) return;
    const p = this.paths;
    for (const d of [p.data, p.exec]) fs.mkdirSync(d, { recursive: true });
    if (!fs.existsSync(p.config)) fs.writeFileSync(p.config, '{}\n');
    fs.rmSync(p.sock, { force: true });
    const cgroups = hierarchies().map((h) => path.join(h, this.key, 'engine'));
    for (const c of cgroups) fs.mkdirSync(c, { recursive: true });
    const args = [
      `--data-root=${p.data}`, `--exec-root=${p.exec}`, `--host=unix://${p.sock}`, `--pidfile=${p.pidfile}`,
      `--config-file=${p.config}`, '--bridge=none', '--iptables=false', '--ip6tables=false',
      `--cgroup-parent=/${this.key}`, '--debug=false', '--log-level=warn', '--shutdown-timeout=3',
    ];
    // Into the engine's cgroup first, then a private mount namespace, then dockerd (same pid all along).
    const enter = cgroups.map((c) => `echo $$ > '${c}/cgroup.procs'`).join(' && ');
    const log = fs.openSync(p.log, 'a');
    this.child = spawn('sh', ['-c', `${enter} && exec unshare --mount --propagation private "$0" "$@"`, DOCKERD, ...args], {
      stdio: ['ignore', log, log],
      env: { PATH: this.pathEnv, HOME: '/root', ...this.env },
      detached: true,
    });
    fs.closeSync(log);
    this.child.unref();
    await this.waitReady();
  }

  private async waitReady(): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (!this.pid) throw new Error(`sim dockerd exited: ${tail(this.paths.log)}`);
      if (fs.existsSync(this.paths.sock) && (await ping(this.paths.sock))) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`sim dockerd did not answer within 30 s: ${tail(this.paths.log)}`);
  }

  /** Stops the daemon as `systemctl stop docker` does (SIGTERM: it stops its containers first); resolves when gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.pid) return;
    this.freeze(false);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
  }

  /** SIGSTOP (a daemon that takes calls but never answers) or SIGCONT, for `ms` when given. */
  freeze(frozen: boolean, ms = 0): void {
    if (this.thawTimer) clearTimeout(this.thawTimer);
    this.thawTimer = null;
    const pid = this.pid;
    if (!pid) return;
    try {
      process.kill(pid, frozen ? 'SIGSTOP' : 'SIGCONT');
    } catch {
      /* gone */
    }
    if (frozen && ms > 0) {
      this.thawTimer = setTimeout(() => this.freeze(false), ms);
      this.thawTimer.unref();
    }
  }

  /** Kills the daemon and every container of the node (synchronous). */
  kill(): void {
    if (this.thawTimer) clearTimeout(this.thawTimer);
    killEngine(this.key);
    this.child = null;
  }

  /** Runs the machine's docker client against this daemon (synchronous; for the test side only). */
  docker(args: string[], input?: string): string {
    return execFileSync(DOCKER_CLIENT, ['--host', `unix://${this.paths.sock}`, ...args], {
      encoding: 'utf8',
      input,
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
  }

  /** The same, asynchronously; resolves with stdout, rejects with stderr. */
  dockerAsync(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const c = spawn(DOCKER_CLIENT, ['--host', `unix://${this.paths.sock}`, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      c.stdout.on('data', (d: Buffer) => (out += d.toString()));
      c.stderr.on('data', (d: Buffer) => (err += d.toString()));
      c.on('error', reject);
      c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`docker ${args.join(' ')}: exit ${code}: ${err.trim()}`))));
    });
  }
}

/** GET /_ping on the daemon's socket. */
function ping(sock: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ socketPath: sock, path: '/_ping', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
  });
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').slice(-2000);
  } catch {
    return '(no log)';
  }
}
