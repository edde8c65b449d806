/**
 * One simulated node as the test sees it: its addresses and paths, the controls that make it misbehave, and the
 * records (requests, start.sh calls, docker calls) that prove what happened on it.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readControl, writeControl } from './control.js';
import type { FailureMode, NodeControl } from './control.js';
import { Engine, cgroupKey, enginePaths } from './engine.js';
import { gpuProcesses } from './gpu.js';
import { seedDataRoot } from './image.js';
import { NodeRecords } from './node-records.js';
export type { RequestRecord } from './node-records.js';
import { availableGiB, readWatermark, renderMeminfo, rewriteInPlace } from './memory.js';
import type { MemorySettings } from './memory.js';
import type { NodePaths } from './paths.js';
import { CONTAINER_NAME } from './paths.js';
import { killNamespaces, mountNamespace, mountTag, processesIn, signalPid } from './procs.js';
import { dockerSockMount, sessionPath, startSshd } from './sshd.js';
import { startStray } from './stray.js';
import type { StrayOptions, StrayServer } from './stray.js';

export type StopMode = 'ok' | 'fail' | 'hang' | 'noop';

/** A simulated DGX Spark node. */
export class SimNode extends NodeRecords {
  /** Every mount namespace this node's sshd ever had (containers outlive an sshd restart). */
  readonly namespaces = new Set<string>();
  private sshd: ChildProcess | null = null;
  private wasRunning = false;
  private stoppedAt: number | null = null;
  /** Called after the sshd got a new namespace (the sim updates its registry entry). */
  onRestart: (() => void) | null = null;
  /** The node's own Docker engine (a real dockerd; engine.ts). */
  readonly engine: Engine;
  /** The image id every name of NODE_IMAGES points to on this node (null until imported). */
  private imageId: string | null = null;
  private imageTar = '';
  /** Files failRemoval made immutable (cleared on kill, so the sim dir can be removed). */
  private readonly immutable = new Set<string>();

  constructor(
    readonly name: string,
    /** Loopback address of the node's sshd, e.g. 127.0.0.20. */
    readonly address: string,
    readonly sshPort: number,
    /** The vLLM port (env PORT) of this node; the server binds 127.0.0.1 (BIND). */
    readonly vllmPort: number,
    override readonly paths: NodePaths,
    private memory: MemorySettings,
    private readonly authorizedKeys: string,
    private readonly loginShell?: string,
  ) {
    super(paths);
    const simDir = path.dirname(path.dirname(paths.root));
    this.engine = new Engine(enginePaths(paths.dockerDir), cgroupKey(simDir, name), sessionPath(paths), {});
  }

  /** The node's cgroup path (engine.ts): its daemon and its containers live under it. */
  get cgroupKey(): string {
    return this.engine.key;
  }

  /**
   * Starts the node's dockerd with the image under every name the profiles and the recipe use: its data root is
   * seeded from the image template (image.ts: as if imported, in milliseconds), then the daemon starts.
   */
  async startEngine(imageTar: string, template: string): Promise<void> {
    this.imageTar = imageTar;
    this.imageId = seedDataRoot(template, this.engine.paths.data);
    await this.engine.start();
  }

  /**
   * Stops the node's dockerd as `systemctl stop docker` does (`{ crash: true }`: SIGKILL, as a crashed daemon: its
   * containerd and containers keep running). Either way every docker call on the node then fails "Cannot connect to
   * the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?".
   */
  async stopDaemon(opts: { crash?: boolean } = {}): Promise<void> {
    if (opts.crash) {
      const pid = this.engine.pid;
      if (pid) signalPid(pid);
      for (let i = 0; i < 200 && this.engine.pid; i++) await new Promise((r) => setTimeout(r, 10));
      return;
    }
    await this.engine.stop();
  }

  /** Starts the node's dockerd again (after stopDaemon or a config change); the node's docker finds it at once. */
  async startDaemon(): Promise<void> {
    await this.engine.start();
    this.rebindSocket();
  }

  /** A frozen daemon (SIGSTOP): docker calls connect and then hang until it thaws (`false`, or after `ms`). */
  freezeDaemon(frozen = true, ms = 0): void {
    this.engine.freeze(frozen, ms);
  }

  /**
   * Makes the next removal of `container` fail as a removal that cannot delete the container's files does: moby
   * (daemon/delete.go, cleanupContainer) marks the container Dead before it removes its directory, so it stays `dead`
   * with State.Error "unable to remove filesystem for <id>: ... operation not permitted". The real means: one file of
   * the container's directory is made immutable (chattr +i). Returns `release()`, which clears the flag (a retried
   * removal then succeeds); the node's stop clears it in any case.
   */
  failRemoval(container = CONTAINER_NAME): () => void {
    const id = this.engine.docker(['container', 'inspect', '--format', '{{.Id}}', container]).trim();
    const file = path.join(this.engine.paths.data, 'containers', id, 'hostname');
    execFileSync('chattr', ['+i', file]);
    this.immutable.add(file);
    return () => {
      try {
        execFileSync('chattr', ['-i', file], { stdio: 'ignore' });
      } catch {
        /* removed meanwhile */
      }
      this.immutable.delete(file);
    };
  }

  /** A new daemon has a new socket file: mount it again over /var/run/docker.sock in the sshd's namespace. */
  private rebindSocket(): void {
    const pid = this.sshd?.pid;
    if (!pid) return;
    execFileSync('nsenter', ['-t', String(pid), '-m', 'sh', '-c', `umount -l /var/run/docker.sock 2>/dev/null; ${dockerSockMount(this.engine.paths.sock)}`]);
  }

  get recipeDir(): string {
    return this.paths.recipeDir;
  }
  get envPath(): string {
    return this.paths.envPath;
  }
  get hfHome(): string {
    return this.paths.hfHome;
  }
  get containerName(): string {
    return CONTAINER_NAME;
  }

  /** What this node's mounts show in /proc/PID/mountinfo (see procs.ts). */
  private get tag(): string {
    return mountTag(path.dirname(path.dirname(this.paths.root)), this.name);
  }

  /** Starts (or restarts) the node's sshd in a fresh mount namespace. */
  async startSshd(): Promise<void> {
    if (this.sshd && this.sshd.exitCode === null && this.sshd.signalCode === null) return;
    this.sshd = await startSshd({ name: this.name, address: this.address, port: this.sshPort, paths: this.paths, authorizedKeys: this.authorizedKeys, loginShell: this.loginShell, dockerSock: this.engine.paths.sock });
    const ns = mountNamespace(this.sshd.pid ?? -1);
    if (ns) this.namespaces.add(ns);
    this.onRestart?.();
  }

  /** Kills the sshd listener and every ssh session (the node becomes unreachable); containers keep running. */
  async stopSshd(): Promise<void> {
    this.killSshSessions();
    const child = this.sshd;
    this.sshd = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    signalPid(child.pid ?? -1);
    await exited;
  }

  /**
   * Freezes (SIGSTOP) or thaws the sshd listener: new connections are accepted by the kernel but get no banner,
   * so clients hit their handshake timeout; open sessions keep working.
   */
  freezeSshd(frozen = true): void {
    if (this.sshd?.pid) signalPid(this.sshd.pid, frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** Drops every open ssh connection (SIGKILL to the per-connection sshd processes), like a lost link. */
  killSshSessions(): void {
    for (const pid of processesIn(this.namespaces, this.tag)) {
      if (pid === this.sshd?.pid) continue;
      try {
        if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sshd') signalPid(pid);
      } catch {
        /* gone */
      }
    }
  }

  /** Kills everything of the node (sessions, start.sh, then its dockerd and containers) and then its sshd. */
  async kill(): Promise<void> {
    const listener = this.sshd?.pid;
    const others = new Set(this.namespaces);
    for (let i = 0; i < 20; i++) {
      const pids = processesIn(others, this.tag).filter((p) => p !== listener);
      if (pids.length === 0) break;
      pids.forEach((p) => signalPid(p));
      await new Promise((r) => setTimeout(r, 20));
    }
    this.engine.kill();
    for (const f of this.immutable) {
      try {
        execFileSync('chattr', ['-i', f], { stdio: 'ignore' });
      } catch {
        /* gone */
      }
    }
    this.immutable.clear();
    await this.stopSshd();
    killNamespaces(others, this.tag);
  }

  /** Live pids of the node (its sshd, sessions, containers, detached scripts). */
  processes(): number[] {
    return processesIn(this.namespaces, this.tag);
  }

  /** Runs a bash script inside the node's mount namespace (sees the node's /proc/meminfo and tools). */
  exec(script: string): string {
    const pid = this.sshd?.pid;
    if (!pid) throw new Error(`sim node ${this.name}: sshd is not running`);
    return execFileSync('nsenter', ['-t', String(pid), '-m', '-u', 'bash', '-s'], { input: script, encoding: 'utf8', env: { ...process.env, PATH: `${this.paths.binDir}:${process.env.PATH ?? ''}` } });
  }

  /**
   * Starts a stray old vLLM outside docker that shares the node's vLLM port (SO_REUSEPORT, same user): listening at
   * once, or bound now and listening once the node's container runs (`listen: 'after-start'`). See stray.ts.
   */
  async startStray(opts: StrayOptions = {}): Promise<StrayServer> {
    const pid = this.sshd?.pid;
    if (!pid) throw new Error(`sim node ${this.name}: sshd is not running`);
    return startStray(pid, this.paths.state, this.vllmPort, opts);
  }

  /** Changes the memory model (e.g. `{ pinnedAvailableGiB: 50 }`: memory never frees). */
  setMemory(patch: Partial<MemorySettings>): void {
    this.memory = { ...this.memory, ...patch };
    this.tick(Date.now());
  }
  /** Sets vm.watermark_scale_factor as the node shows it (a higher factor lowers MemAvailable). */
  setWatermark(factor: number): void {
    rewriteInPlace(this.paths.watermark, `${factor}\n`); // the bind mount pins the inode: never replace the file
    this.tick(Date.now());
  }
  /** MemAvailable the node shows now, in GiB. */
  memAvailableGiB(): number {
    const m = /MemAvailable:\s+(\d+) kB/.exec(fs.readFileSync(this.paths.meminfo, 'utf8'));
    return Number(m?.[1] ?? 0) / (1024 * 1024);
  }

  /** Recomputes and rewrites the node's /proc/meminfo (called by the sim's timer). */
  tick(now: number): void {
    // What holds the GPU (and its unified memory) is what the real engine started with --gpus and still runs.
    const running = gpuProcesses(this.paths.state).length > 0;
    if (this.wasRunning && !running) this.stoppedAt = now;
    this.wasRunning = running;
    const avail = availableGiB(this.memory, running, this.stoppedAt, readWatermark(this.paths.watermark), now);
    rewriteInPlace(this.paths.meminfo, renderMeminfo(this.memory.totalGiB, avail));
  }

  /** Failure mode of the next container start. */
  setFailure(failure: FailureMode): void {
    writeControl(this.paths.state, { failure });
  }
  /** Time the next started vLLM takes to listen. */
  setReadyDelay(ms: number): void {
    writeControl(this.paths.state, { readyDelayMs: ms });
  }
  /** Any other control (slowMs, nvidiaSmiHidesContainers, gpuDriverBroken, vllmRelease, holds, engineDead). */
  setControl(patch: Partial<NodeControl>): NodeControl {
    return writeControl(this.paths.state, patch);
  }
  /** The node's current controls. */
  control(): NodeControl {
    return readControl(this.paths.state);
  }
  /** Whether `sudo -n` succeeds on the node. */
  setSudo(ok: boolean): void {
    const f = path.join(this.paths.state, 'sudo-ok');
    if (ok) fs.writeFileSync(f, '');
    else fs.rmSync(f, { force: true });
  }
  /** How the recipe's stop.sh behaves: ok, fail (exit 1), hang (never returns), noop (exit 0, container stays). */
  setStopMode(mode: StopMode): void {
    fs.writeFileSync(path.join(this.paths.state, 'stop-mode'), `${mode}\n`);
  }
  /** Makes `image` absent (`docker rmi`: the other names keep the image), so `docker image inspect` fails. */
  removeImage(image: string): void {
    this.engine.docker(['rmi', image]);
  }
  /** Makes `image` present ("pulled") on the node: a tag of the node's image (imported again if it was removed). */
  addImage(image: string): void {
    try {
      if (this.imageId) this.engine.docker(['image', 'inspect', this.imageId]);
    } catch {
      this.imageId = null;
    }
    if (!this.imageId) {
      this.imageId = this.engine.docker(['import', this.imageTar, image]).trim();
      return;
    }
    this.engine.docker(['tag', this.imageId, image]);
  }

  /** Runs the node's docker with `args` inside the node (e.g. `pause vllm-qwen38`); returns its stdout. */
  docker(...args: string[]): string {
    return this.exec(`docker ${args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')}`);
  }
  /** The restart policy the recipe's next `docker run` gets (`--restart X`); null: none (docker's default "no"). */
  setRestartPolicy(policy: string | null): void {
    const f = path.join(this.paths.state, 'restart-policy');
    if (policy) fs.writeFileSync(f, `${policy}\n`);
    else fs.rmSync(f, { force: true });
  }
  /** Makes a volume named `name` exist (so `docker inspect NAME` finds a volume). */
  addVolume(name: string): void {
    this.engine.docker(['volume', 'create', name]);
  }
  /**
   * The daemon's log settings (daemon.json `log-driver`, `log-opts`) for containers created from now on; null: the
   * default. The daemon reads them at start, so this restarts it (its running containers stop, as on a node).
   */
  async setDaemonLogConfig(cfg: { driver?: string; opts?: Record<string, string> } | null): Promise<void> {
    const json = cfg ? { ...(cfg.driver ? { 'log-driver': cfg.driver } : {}), ...(cfg.opts ? { 'log-opts': cfg.opts } : {}) } : {};
    fs.writeFileSync(this.engine.paths.config, `${JSON.stringify(json)}\n`);
    await this.engine.stop();
    await this.startDaemon();
  }
  /**
   * Drops all log lines of the container up to and including "Application startup complete." (log rotation): the
   * engine's json-file log is rewritten in place (same file, which the daemon keeps appending to).
   */
  rotateLog(container = CONTAINER_NAME): void {
    const rec = this.containers().find((c) => c.Name === `/${container}`);
    if (!rec) throw new Error(`sim node ${this.name}: no container ${container}`);
    const lines = fs.readFileSync(rec.LogPath, 'utf8').split('\n').filter((l) => l !== '');
    const cut = lines.findIndex((l) => l.includes('Application startup complete.'));
    const filler = JSON.stringify({ log: 'INFO 00-00 00:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 812.4 tokens/s (log rotated by the simulator)\n', stream: 'stdout', time: new Date().toISOString() });
    rewriteInPlace(rec.LogPath, [filler, ...lines.slice(cut + 1)].join('\n') + '\n');
  }
}
