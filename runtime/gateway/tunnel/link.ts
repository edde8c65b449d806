/**
 * One node's tunnel: a listener on 127.0.0.1:localPort of the gateway host whose every connection becomes a
 * direct-tcpip channel (what `ssh -L` opens) to BIND:PORT on the node, over one ssh2 connection made by
 * runtime/node/ssh.ts (ssh -G settings, known_hosts verification, ProxyJump, no agent forwarding). A lost link
 * comes back with exponential backoff; GET /health through the listener says whether the server answers.
 */
import http from 'node:http';
import net from 'node:net';
import { openSshTransport, type SshTransport } from '../../node/ssh.js';
import type { NodeTarget } from '../../node/types.js';
import type { TunnelNodeHealth } from './health.js';

export interface TunnelSpec {
  node: string;
  target: NodeTarget;
  localPort: number;
  /** The node's BIND (loopback) and PORT: where the node's sshd connects. */
  remoteHost: string;
  remotePort: number;
  /**
   * The node's target as nodes.json gives it now (read again at every probe): a link that nodes.json, the ssh config
   * or known_hosts no longer chooses is closed and opened again as they say. Absent: `target`, as given at the start.
   */
  targetNow?: () => NodeTarget;
}

export interface TunnelTimings {
  /** First reconnect delay; it doubles per failed attempt up to backoffMaxMs. */
  backoffMinMs: number;
  backoffMaxMs: number;
  /** A lost link that stayed up this long (or that a probe answered through) resets the backoff to backoffMinMs. */
  stableMs: number;
  probeIntervalMs: number;
  probeTimeoutMs: number;
}

export const DEFAULT_TIMINGS: TunnelTimings = { backoffMinMs: 250, backoffMaxMs: 30_000, stableMs: 10_000, probeIntervalMs: 5_000, probeTimeoutMs: 5_000 };

export type Opener = (target: NodeTarget) => Promise<SshTransport>;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** GET /health through the listener (the whole path the gateway's requests take). */
function probe(port: number, timeoutMs: number): Promise<{ ok: boolean; detail: string }> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/health', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      resolve(code === 200 ? { ok: true, detail: 'GET /health: 200' } : { ok: false, detail: `GET /health: ${code}` });
    });
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', (e) => resolve({ ok: false, detail: `GET /health: ${e.message || 'the connection closed'}` }));
  });
}

export class NodeTunnel {
  readonly health: TunnelNodeHealth;
  private link: SshTransport | null = null;
  private server: net.Server | null = null;
  private readonly stop = new AbortController();
  private loop: Promise<void> | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private everConnected = false;
  /** Ends the current link's wait in keepLinked with the reason it may no longer be used. */
  private retire: ((why: string) => void) | null = null;
  /** The last "cannot judge" warning logged, so a file that stays broken is said once, not at every probe. */
  private judgeWarning = '';

  constructor(
    readonly spec: TunnelSpec,
    private readonly timings: TunnelTimings,
    private readonly changed: () => void,
    private readonly log: (line: string) => void,
    private readonly open: Opener = openSshTransport,
  ) {
    this.health = {
      localPort: spec.localPort, remote: `${spec.remoteHost}:${spec.remotePort}`, listening: false, connected: false,
      connectedSince: null, probe: null, lastError: null, lastErrorAt: null, reconnects: 0,
    };
  }

  /**
   * Bind the listener, then keep the link up. A port that cannot be bound (another program, or another tunnel,
   * holds it) fails this tunnel alone: its health says why (so the gateway file disables its endpoint with that
   * reason) and the bind is tried again with the reconnect backoff, while the other tunnels run on.
   */
  start(): void {
    this.loop = this.run();
  }

  private listen(): Promise<net.Server> {
    const server = net.createServer((sock) => this.accept(sock));
    return new Promise<net.Server>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.spec.localPort, '127.0.0.1', () => {
        server.off('error', reject);
        resolve(server);
      });
    });
  }

  private async run(): Promise<void> {
    const { node, localPort } = this.spec;
    for (let attempt = 0; !this.server; attempt++) {
      if (this.stop.signal.aborted) return;
      try {
        this.server = await this.listen();
      } catch (e) {
        const delay = Math.min(this.timings.backoffMaxMs, this.timings.backoffMinMs * 2 ** attempt);
        this.fail(`${(e as Error).message} (another program holds the port: stop it, or change gatewayTunnel.localPort)`);
        this.log(`${node}: cannot listen on 127.0.0.1:${localPort}: ${(e as Error).message}; this tunnel alone is down, trying again in ${(delay / 1000).toFixed(2)} s`);
        await sleep(delay, this.stop.signal);
      }
    }
    if (this.stop.signal.aborted) {
      this.server.close();
      return;
    }
    this.server.on('error', (e) => this.fail(`listener: ${e.message}`));
    Object.assign(this.health, { listening: true, lastError: null, lastErrorAt: null });
    this.changed();
    this.log(`${node}: listening on 127.0.0.1:${localPort} for ${this.spec.remoteHost}:${this.spec.remotePort} on ${node}`);
    this.probeTimer = setInterval(() => void this.probeNow(), this.timings.probeIntervalMs);
    await this.keepLinked();
  }

  /** Close the listener and the link; the health then says neither listening nor connected. */
  async close(): Promise<void> {
    this.stop.abort();
    if (this.probeTimer) clearInterval(this.probeTimer);
    await this.link?.close();
    this.link = null;
    await this.loop;
    await new Promise<void>((resolve) => (this.server?.listening ? this.server.close(() => resolve()) : resolve()));
    Object.assign(this.health, { listening: false, connected: false, connectedSince: null, probe: null });
  }

  private accept(sock: net.Socket): void {
    sock.on('error', () => undefined);
    const link = this.link;
    if (!link) {
      sock.destroy();
      return;
    }
    link.forwardOut(this.spec.remoteHost, this.spec.remotePort).then(
      (stream) => {
        stream.on('error', () => sock.destroy());
        sock.on('close', () => stream.destroy());
        stream.on('close', () => sock.destroy());
        sock.pipe(stream).pipe(sock);
      },
      () => sock.destroy(),
    );
  }

  private fail(why: string): void {
    this.health.lastError = why;
    this.health.lastErrorAt = new Date().toISOString();
    this.changed();
  }

  private async keepLinked(): Promise<void> {
    const { node } = this.spec;
    let attempt = 0;
    while (!this.stop.signal.aborted) {
      try {
        const t = await this.open(this.target());
        if (this.stop.signal.aborted) {
          await t.close();
          return;
        }
        const lost = new Promise<string>((resolve) => t.onDown(resolve));
        const upAt = Date.now();
        this.link = t;
        if (this.everConnected) this.health.reconnects += 1;
        this.everConnected = true;
        Object.assign(this.health, { connected: true, connectedSince: new Date(upAt).toISOString() });
        this.log(`${node}: ssh link up, 127.0.0.1:${this.spec.localPort} → ${this.health.remote} on ${node}`);
        this.changed();
        void this.probeNow();
        const stopped = new Promise<null>((resolve) => this.stop.signal.addEventListener('abort', () => resolve(null), { once: true }));
        const retired = new Promise<{ retired: string }>((resolve) => (this.retire = (why) => resolve({ retired: why })));
        const why = await Promise.race([lost, stopped, retired]);
        this.retire = null;
        if (why === null) return;
        this.link = null;
        if (typeof why === 'object') {
          // The files chose another link: no connection goes through this one again; the new one opens at once.
          await t.close();
          attempt = 0;
          Object.assign(this.health, { connected: false, connectedSince: null, probe: null });
          this.fail(`ssh link closed: ${why.retired}`);
          continue;
        }
        // A link that served (a probe answered through it) or stayed up stableMs died a real death: retry at once
        // (backoffMinMs). One that keeps dropping right after its handshake keeps doubling the delay instead.
        if (this.health.probe?.ok === true || Date.now() - upAt >= this.timings.stableMs) attempt = 0;
        Object.assign(this.health, { connected: false, connectedSince: null, probe: null });
        this.fail(`ssh link lost: ${why}`);
      } catch (e) {
        this.fail((e as Error).message);
      }
      const delay = Math.min(this.timings.backoffMaxMs, this.timings.backoffMinMs * 2 ** attempt);
      attempt += 1;
      this.log(`${node}: ${this.health.lastError ?? 'ssh link down'}; reconnecting in ${(delay / 1000).toFixed(2)} s`);
      await sleep(delay, this.stop.signal);
    }
  }

  /** The node's target as the files give it now. */
  private target(): NodeTarget {
    return this.spec.targetNow?.() ?? this.spec.target;
  }

  /**
   * Judge the link by the files again (nodes.json's target, ssh -G, identity files, known_hosts); true when it may
   * still be used. A link they no longer choose is retired (keepLinked closes it and opens the one they choose now);
   * files that cannot be read now (targetNow keeps the last good nodes.json) leave it as it is.
   */
  private async stillChosen(link: SshTransport): Promise<boolean> {
    let why: string | null;
    try {
      why = await link.drift(this.target());
    } catch (e) {
      // ssh -G failed (a config being saved, a Match exec that timed out): nothing says the link is wrong, so it
      // stays; a config that resolves to something else retires it at the next probe.
      const warning = `${this.spec.node}: warning: cannot judge the ssh link by the files now: ${(e as Error).message}`;
      if (warning !== this.judgeWarning) this.log(warning);
      this.judgeWarning = warning;
      return true;
    }
    this.judgeWarning = '';
    if (why === null) return true;
    this.log(`${this.spec.node}: ${why}; closing the ssh link`);
    if (this.link === link) this.retire?.(why);
    return false;
  }

  /** Probe through the listener; the health changes (and the file is rewritten) only when the answer does. */
  private async probeNow(): Promise<void> {
    const link = this.link;
    if (!link || !(await this.stillChosen(link))) return;
    const r = await probe(this.spec.localPort, this.timings.probeTimeoutMs);
    if (!this.health.connected || this.stop.signal.aborted) return;
    const p = this.health.probe;
    if (p && p.ok === r.ok && p.detail === r.detail) return;
    this.health.probe = { ...r, at: new Date().toISOString() };
    this.log(`${this.spec.node}: ${r.ok ? 'the server answers through the tunnel' : `no answer through the tunnel (${r.detail})`}`);
    this.changed();
  }
}
