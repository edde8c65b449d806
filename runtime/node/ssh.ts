/**
 * `host: ssh` — the only module that imports ssh2. Settings come from `ssh -G`; the host key is verified against
 * known_hosts before any byte of a script is sent; auth is ssh-agent then identity files; no agent forwarding.
 * Every script runs as the remote command `bash -s` exactly, with the script on stdin. `pulse tunnel` opens its
 * port forwards (forwardOut, a direct-tcpip channel like `ssh -L`) on this same connection setup, so host-key trust
 * has one home.
 */
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import ssh2 from 'ssh2';
import type { AgentAuthMethod, PublicKeyAuthMethod, Client as ClientType, ClientChannel, ConnectConfig } from 'ssh2';
import { PulseError } from '../errors.js';
import { readRegularFile } from './files.js';
import { knownTypes, verifyHostKey } from './known-hosts.js';
import { resolveSsh } from './ssh-config.js';
import type { SshSettings } from './ssh-config.js';
import type { Channel, Transport } from './transport.js';
import type { NodeTarget } from './types.js';

const { Client, utils } = ssh2;
const KEEPALIVE_MS = 15_000;
const KEEPALIVE_MAX = 4;
const READY_TIMEOUT_MS = 20_000;

/** Host key algorithms the server may use, limited to the types known_hosts holds for it (so we can verify). */
function hostKeyAlgorithms(types: string[]): string[] | undefined {
  if (types.length === 0) return undefined;
  return types.flatMap((t) => (t === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [t]));
}

/** Auth attempts in ssh's order: the agent, then each readable unencrypted identity file. */
function authMethods(s: SshSettings): (AgentAuthMethod | PublicKeyAuthMethod)[] {
  const out: (AgentAuthMethod | PublicKeyAuthMethod)[] = [];
  // With IdentitiesOnly, ssh offers only the configured files; pulse then skips the agent (it cannot ask the agent
  // for one key without ssh2 internals), so the agent's other keys are never tried.
  if (process.env.SSH_AUTH_SOCK && !s.identitiesOnly) out.push({ type: 'agent', username: s.user, agent: process.env.SSH_AUTH_SOCK });
  for (const file of s.identityFiles) {
    let data: Buffer;
    try {
      data = readRegularFile(file);
    } catch {
      continue;
    }
    const parsed = utils.parseKey(data);
    if (parsed instanceof Error) continue; // encrypted without agent, or not a key: ssh would prompt; we cannot
    out.push({ type: 'publickey', username: s.user, key: data });
  }
  return out;
}

/** A connected client and the host key it verified (kept, so a link can be judged again by the files of later). */
interface Connected {
  client: ClientType;
  hostKey: PresentedKey;
}

/** A host key a link was opened with, and where it was looked up. */
interface PresentedKey {
  blob: Buffer;
  alias: string;
}

/** The name known_hosts is searched for: HostKeyAlias when set, else the host name. */
const keyHostOf = (s: SshSettings): string => s.hostKeyAlias ?? s.hostname;

/** Connect and authenticate one ssh2 client (optionally over a forwarded stream from a jump host). */
function connectClient(s: SshSettings, sock?: Duplex): Promise<Connected> {
  const keyHost = keyHostOf(s);
  const auth = authMethods(s);
  if (auth.length === 0) {
    return Promise.reject(new PulseError('unreachable', `${s.alias}: no ssh-agent (SSH_AUTH_SOCK) and no readable unencrypted IdentityFile`));
  }
  return new Promise((resolve, reject) => {
    const client = new Client();
    let refusal: string | null = null;
    let presented: Buffer | null = null;
    const config: ConnectConfig = {
      host: s.hostname, port: s.port, username: s.user, sock, authHandler: auth, agentForward: false,
      keepaliveInterval: KEEPALIVE_MS, keepaliveCountMax: KEEPALIVE_MAX,
      readyTimeout: s.connectTimeoutS ? s.connectTimeoutS * 1000 : READY_TIMEOUT_MS,
      hostVerifier: (key: Buffer) => {
        const v = verifyHostKey(key, keyHost, s.port, s.knownHostsFiles, s.strictHostKeyChecking);
        if (!v.ok) refusal = v.reason;
        else presented = Buffer.from(key);
        if (v.ok && v.warning) process.stderr.write(`pulse: warning: ${v.warning}\n`);
        return v.ok;
      },
    };
    const algos = hostKeyAlgorithms(knownTypes(s.knownHostsFiles, keyHost, s.port));
    if (algos) config.algorithms = { serverHostKey: algos as never };
    client.once('ready', () => {
      if (presented) resolve({ client, hostKey: { blob: presented, alias: s.alias } });
      else {
        client.end(); // ssh2 never reaches 'ready' without asking the verifier; should it ever, nothing runs on it
        reject(new PulseError('unreachable', `${s.alias}: the ssh handshake finished without a verified host key`));
      }
    });
    // `on`, not `once`: ssh2 may emit a second error (socket after handshake), which must never go unhandled.
    client.on('error', (e: Error) => {
      client.end();
      const why = refusal ?? e.message;
      reject(new PulseError('unreachable', `${s.alias} (${s.user}@${s.hostname}:${s.port}): ${why}`, { cause: e }));
    });
    // A link lost after the server's version line but before 'ready' emits only 'end' and 'close', no 'error':
    // without this the connect (and the step waiting on it, heartbeating) would never settle.
    client.once('close', () => {
      reject(new PulseError('unreachable', `${s.alias} (${s.user}@${s.hostname}:${s.port}): ${refusal ?? 'the connection closed before the ssh handshake finished'}`));
    });
    client.connect(config);
  });
}

/** `[user@]host[:port]` of a ProxyJump entry, resolved through ssh -G for the host part. */
async function resolveJump(spec: string): Promise<SshSettings> {
  const m = /^(?:([^@]+)@)?([^:@]+)(?::(\d+))?$/.exec(spec);
  if (!m || !m[2]) throw new PulseError('config', `ProxyJump ${JSON.stringify(spec)}: expected [user@]host[:port]`);
  const s = await resolveSsh(m[2]);
  if (s.proxyJump.length > 0 || s.proxyCommand) {
    throw new PulseError('config', `ProxyJump ${spec} itself needs a jump host: pulse supports one ProxyJump hop`);
  }
  return { ...s, user: m[1] ?? s.user, port: m[3] ? Number(m[3]) : s.port };
}

/** Open a forwarded TCP stream through the jump client to the target's host:port. */
function forward(jump: ClientType, s: SshSettings): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    jump.forwardOut('127.0.0.1', 0, s.hostname, s.port, (err, stream) => {
      if (err) reject(new PulseError('unreachable', `${s.alias}: the jump host cannot reach ${s.hostname}:${s.port}: ${err.message}`, { cause: err }));
      else resolve(stream);
    });
  });
}

/** One ssh connection (plus its jump host, if any) used for every step on a node. */
export class SshTransport implements Transport {
  private readonly client: ClientType;
  private readonly jump: ClientType | null;
  private readonly keys: PresentedKey[];
  private up = true;
  private readonly downListeners: ((why: string) => void)[] = [];

  /**
   * `routeAtOpen` is routeKey() of what the files said when the link was opened, `keys` the host keys it verified (the node's, then the
   * jump host's): drift() compares both with what the files say now.
   */
  constructor(readonly target: NodeTarget, private readonly routeAtOpen: string, node: Connected, jump: Connected | null) {
    this.client = node.client;
    this.jump = jump?.client ?? null;
    this.keys = [node.hostKey, ...(jump ? [jump.hostKey] : [])];
    const client = this.client;
    const down = (e?: unknown): void => {
      const was = this.up;
      this.up = false;
      const why = e instanceof Error ? e.message : 'the ssh connection closed';
      if (was) for (const l of this.downListeners.splice(0)) l(why);
    };
    for (const c of [client, this.jump]) {
      c?.on('close', down);
      c?.on('end', down);
      c?.on('error', down);
    }
  }

  get alive(): boolean {
    return this.up;
  }

  /** Called once when the link is lost (not after close()). */
  onDown(listener: (why: string) => void): void {
    if (this.up) this.downListeners.push(listener);
  }

  /** A TCP stream to host:port as the node sees it (`ssh -L`'s direct-tcpip channel); never a remote command. */
  forwardOut(host: string, port: number): Promise<Duplex> {
    return new Promise((resolve, reject) => {
      if (!this.up) {
        reject(new PulseError('unreachable', `${this.target.name}: the ssh connection is closed`));
        return;
      }
      this.client.forwardOut('127.0.0.1', 0, host, port, (err, stream) => {
        if (err) reject(new PulseError('unreachable', `${this.target.name}: the node cannot connect to ${host}:${port}: ${err.message}`, { cause: err }));
        else resolve(stream);
      });
    });
  }

  /** Start `bash -s` on the node. The remote command is the fixed string `bash -s`, never built from inputs. */
  exec(): Promise<Channel> {
    return new Promise((resolve, reject) => {
      if (!this.up) {
        reject(new PulseError('unreachable', `${this.target.name}: the ssh connection is closed`));
        return;
      }
      this.client.exec('bash -s', (err, ch) => {
        if (err) reject(new PulseError('unreachable', `${this.target.name}: cannot start bash -s over ssh: ${err.message}`, { cause: err }));
        else resolve(this.channel(ch));
      });
    });
  }

  private channel(ch: ClientChannel): Channel {
    let exit: { code: number | null; signal: string | null } | null = null;
    ch.on('exit', (code: number | null, signal?: string) => {
      exit = { code: typeof code === 'number' ? code : null, signal: signal ?? null };
    });
    let closed = false;
    const done = new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
      ch.once('close', () => {
        closed = true;
        if (exit) resolve(exit);
        else reject(new PulseError('unreachable', `${this.target.name}: the ssh link dropped while a script ran`));
      });
    });
    done.catch(() => undefined);
    ch.stdin.on('error', () => undefined);
    return { stdin: ch.stdin, stdout: ch, stderr: ch.stderr, done, kill: () => ch.close(), ended: () => exit !== null || closed };
  }

  /**
   * Why this link may no longer be used for `target`, or null when the files still choose it: nodes.json names
   * another ssh target, `ssh -G` now gives another host, port, user, identity (by its bytes), known_hosts file or
   * checking mode, or known_hosts now refuses a host key the link was opened with (@revoked, changed, removed).
   * A file that cannot be read or an ssh config that does not resolve fails here as it would fail a new link.
   */
  async drift(target: NodeTarget): Promise<string | null> {
    if (target.host !== 'ssh' || (target.ssh ?? target.name) !== (this.target.ssh ?? this.target.name)) {
      return `nodes.json no longer reaches ${target.name} through ssh ${this.target.ssh ?? this.target.name}`;
    }
    let now: SshRoute;
    try {
      now = await resolveRoute(target);
    } catch (e) {
      // A config being saved, or a Match exec that timed out: the step cannot be vouched for now, but may be in a
      // moment; retried as a link that cannot be reached (a config that stays broken fails as a new link would).
      throw new PulseError('unreachable', `${target.name}: cannot judge the ssh link by the files now: ${(e as Error).message}`, { cause: e });
    }
    if (routeKey(now) !== this.routeAtOpen) return `the ssh settings of ${this.target.ssh ?? this.target.name} changed since the link opened`;
    for (const [k, s] of this.keys.map((k, i) => [k, i === 0 ? now.node : now.jump] as const)) {
      if (!s) continue;
      const v = verifyHostKey(k.blob, keyHostOf(s), s.port, s.knownHostsFiles, s.strictHostKeyChecking);
      if (!v.ok) return `known_hosts no longer accepts the host key of ${k.alias}: ${v.reason}`;
    }
    return null;
  }

  /** Close the connection (and the jump host's). */
  async close(): Promise<void> {
    this.up = false;
    this.downListeners.length = 0;
    this.client.end();
    this.jump?.end();
  }
}

/** What the files say about reaching a node: its ssh settings and its jump host's, each resolved with `ssh -G`. */
export interface SshRoute {
  node: SshSettings;
  jump: SshSettings | null;
}

/** The target's route as the files give it now (ProxyCommand and a second ProxyJump hop are refused). */
export async function resolveRoute(target: NodeTarget): Promise<SshRoute> {
  const s = await resolveSsh(target.ssh ?? target.name);
  if (s.proxyCommand) throw new PulseError('config', `${target.name}: ProxyCommand is not supported by pulse; use ProxyJump (one hop)`);
  if (s.proxyJump.length > 1) throw new PulseError('config', `${target.name}: ProxyJump ${s.proxyJump.join(',')} has more than one hop; pulse supports one`);
  return { node: s, jump: s.proxyJump.length === 0 ? null : await resolveJump(s.proxyJump[0] as string) };
}

/** sha256 of a file's bytes, or a word for why it cannot be read (a key file that appears or goes is a change). */
function digestOf(file: string): string {
  try {
    return createHash('sha256').update(readRegularFile(file)).digest('base64');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? 'unreadable';
  }
}

/**
 * Everything in a route that decides which host a link reaches, as whom, with which key, and how its host key is
 * judged: two routes with the same key would open the same link. Identity files count by their bytes.
 */
function routeKey(r: SshRoute): string {
  const one = (s: SshSettings): unknown[] => [
    s.hostname, s.port, s.user, s.hostKeyAlias, s.strictHostKeyChecking, s.knownHostsFiles, s.identitiesOnly,
    s.identityFiles.map((f) => [f, digestOf(f)]),
  ];
  return JSON.stringify([one(r.node), r.jump ? one(r.jump) : null]);
}

/** Resolve the target's alias, connect (through one ProxyJump hop if configured), verify, authenticate. */
export async function openSshTransport(target: NodeTarget): Promise<SshTransport> {
  const route = await resolveRoute(target);
  // Taken now, before the connect reads the same identity files: drift() compares later files with these bytes.
  const key = routeKey(route);
  if (!route.jump) return new SshTransport(target, key, await connectClient(route.node), null);
  const jump = await connectClient(route.jump);
  try {
    return new SshTransport(target, key, await connectClient(route.node, await forward(jump.client, route.node)), jump);
  } catch (e) {
    jump.client.end();
    throw e;
  }
}
