/**
 * ssh security claims, against a recording ssh server (ssh2's Server on loopback, which logs every auth method
 * and channel request the client makes) and against a simulated node's real sshd:
 * - the host key is always verified: a wrong or unknown key is refused before any auth or script;
 * - no agent forwarding, even with ForwardAgent yes in the user's ssh config and a live agent;
 * - no password or keyboard-interactive auth is ever tried (so nothing can prompt), even when the server offers them;
 * - the remote command is exactly `bash -s`, with no pty.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import ssh2 from 'ssh2';
import { connect as connectTcp } from 'node:net';
import { networkInterfaces } from 'node:os';
import { openSshTransport } from '../../runtime/node/ssh.js';
import { parseNodesConfig } from '../../runtime/config/nodes.js';
import { runTunnels } from '../../runtime/gateway/tunnel/run.js';
import { freePort } from '../sim/ports.js';
import { endpointOf } from '../helpers/tunnel.js';
import { until } from '../helpers/until.js';
import { isPulseError } from '../../runtime/errors.js';
import { runCli } from '../helpers/cli.js';
import { scratch } from '../fuzz/gen.js';
import { startSim, type Sim } from '../sim/index.js';

const tmp = scratch('pulse-sec-ssh-');
interface Seen {
  methods: string[];
  requests: string[];
  commands: string[];
  /** Session channels opened (every command needs one; a port forward does not). */
  sessions?: number;
  /** direct-tcpip channels (`ssh -L`'s): destination host:port. */
  tcpip?: string[];
}
let server: ssh2.Server;
let port = 0;
let mode: 'reject-all' | 'accept' = 'accept';
let seen: Seen = { methods: [], requests: [], commands: [] };
let agent: ChildProcess | null = null;
let sim: Sim | null = null;
const savedEnv = { PULSE_SSH_CONFIG: process.env['PULSE_SSH_CONFIG'], SSH_AUTH_SOCK: process.env['SSH_AUTH_SOCK'] };

function keygen(name: string): { key: string; pub: string } {
  const f = path.join(tmp.dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', f]);
  return { key: f, pub: readFileSync(`${f}.pub`, 'utf8').trim() };
}

function sshConfig(name: string, opts: { knownHosts: string; identity: string; extra?: string[] }): string {
  const file = path.join(tmp.dir, name);
  const lines = ['Host rec', '  HostName 127.0.0.1', `  Port ${port}`, '  User pulse', `  IdentityFile ${opts.identity}`, '  IdentitiesOnly yes', `  UserKnownHostsFile ${opts.knownHosts}`, '  GlobalKnownHostsFile /dev/null', ...(opts.extra ?? [])];
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function knownHosts(name: string, pub: string): string {
  const file = path.join(tmp.dir, name);
  const [type, b64] = pub.split(' ');
  writeFileSync(file, `[127.0.0.1]:${port} ${type} ${b64}\n`);
  return file;
}

let hostKey: { key: string; pub: string };
let clientKey: { key: string; pub: string };
let foreignKey: { key: string; pub: string };

before(async () => {
  hostKey = keygen('host');
  clientKey = keygen('client');
  foreignKey = keygen('foreign');
  server = new ssh2.Server({ hostKeys: [readFileSync(hostKey.key)] }, (client) => {
    client.on('authentication', (ctx) => {
      seen.methods.push(ctx.method);
      if (mode === 'accept' && ctx.method === 'publickey') return ctx.accept();
      // Offer everything, including the methods that would prompt a person.
      ctx.reject(['publickey', 'password', 'keyboard-interactive']);
    });
    client.on('ready', () => {
      client.on('tcpip', (accept, _reject, info) => {
        seen.tcpip = [...(seen.tcpip ?? []), `${info.destIP}:${info.destPort}`];
        // A server behind the forward that answers every request 200 (the tunnel's GET /health probe).
        const ch = accept();
        ch.on('data', () => ch.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
        ch.on('error', () => undefined);
      });
      client.on('session', (accept) => {
        seen.sessions = (seen.sessions ?? 0) + 1;
        const session = accept();
        session.on('auth-agent', (acc) => {
          seen.requests.push('auth-agent');
          acc?.();
        });
        session.on('pty', (acc) => {
          seen.requests.push('pty');
          acc?.();
        });
        session.on('x11', (acc) => {
          seen.requests.push('x11');
          acc?.();
        });
        session.on('env', (acc, _rej, info) => {
          seen.requests.push(`env ${info.key}`);
          acc?.();
        });
        session.on('exec', (acc, _rej, info) => {
          seen.commands.push(info.command);
          const ch = acc();
          ch.stdin.resume();
          ch.write('reached\n');
          ch.exit(0);
          ch.end();
        });
      });
    });
    client.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as { port: number }).port;
  // A live agent holding the client key: forwarding it would be possible if pulse asked.
  const sock = path.join(tmp.dir, 'agent.sock');
  agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
  for (let i = 0; i < 50; i++) {
    try {
      execFileSync('ssh-add', ['-q', clientKey.key], { env: { ...process.env, SSH_AUTH_SOCK: sock }, stdio: 'ignore' });
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  process.env['SSH_AUTH_SOCK'] = sock;
});

after(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  agent?.kill('SIGKILL');
  await sim?.stop();
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  tmp.cleanup();
});

async function connect(config: string): Promise<{ ok: boolean; error: string; out: string }> {
  process.env['PULSE_SSH_CONFIG'] = config;
  seen = { methods: [], requests: [], commands: [] };
  try {
    const t = await openSshTransport({ name: 'rec', host: 'ssh', ssh: 'rec' });
    try {
      const ch = await t.exec();
      let out = '';
      ch.stdout.on('data', (d: Buffer) => (out += d.toString()));
      ch.stdin.end('echo hi\n');
      await ch.done;
      return { ok: true, error: '', out };
    } finally {
      await t.close();
    }
  } catch (e) {
    assert.ok(isPulseError(e), `a PulseError, got ${String(e)}`);
    return { ok: false, error: `${e.kind}: ${e.message}`, out: '' };
  }
}

test('the right host key connects; the remote command is exactly `bash -s`, no pty, no agent, no env', async () => {
  mode = 'accept';
  const r = await connect(sshConfig('good', { knownHosts: knownHosts('kh-good', hostKey.pub), identity: clientKey.key }));
  assert.equal(r.ok, true, r.error);
  assert.equal(r.out, 'reached\n');
  assert.deepEqual(seen.commands, ['bash -s']);
  assert.deepEqual(seen.requests, []);
});

test('no agent forwarding, even with ForwardAgent yes in the ssh config and a live agent', async () => {
  mode = 'accept';
  const r = await connect(sshConfig('fwd', { knownHosts: knownHosts('kh-fwd', hostKey.pub), identity: clientKey.key, extra: ['  ForwardAgent yes'] }));
  assert.equal(r.ok, true, r.error);
  assert.equal(seen.requests.includes('auth-agent'), false, `requests: ${seen.requests.join(', ')}`);
});

test('pulse tunnel opens only direct-tcpip channels to BIND:PORT (no session, command or agent), on a 127.0.0.1 listener', async () => {
  mode = 'accept';
  process.env['PULSE_SSH_CONFIG'] = sshConfig('tun', { knownHosts: knownHosts('kh-tun', hostKey.pub), identity: clientKey.key, extra: ['  ForwardAgent yes'] });
  seen = { methods: [], requests: [], commands: [], sessions: 0, tcpip: [] };
  const localPort = await freePort();
  const env = { HF_HOME: '/hf', BIND: '127.0.0.1', PORT: '8123' };
  const config = parseNodesConfig(JSON.stringify({
    nodes: {
      gw: { host: 'local', env, gatewayUrl: 'http://127.0.0.1:8123/v1', recipes: {} },
      rec: { host: 'ssh', ssh: 'rec', env, gatewayUrl: 'http://10.0.0.2:8123/v1', gatewayTunnel: { localPort }, recipes: {} },
    },
  }), 'nodes.json');
  const stateDir = path.join(tmp.dir, 'tunnel-state');
  const stop = new AbortController();
  const lines: string[] = [];
  const run = runTunnels({ config, stateDir, signal: stop.signal, log: (l) => lines.push(l), timings: { probeIntervalMs: 50 } });
  try {
    await until('the tunnelled endpoint enabled', () => endpointOf(stateDir, 'rec')?.enabled === true, 30_000, { detail: () => lines.join('\n') });
    const lan = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    if (lan) {
      const reached = await new Promise<boolean>((resolve) => {
        const sock = connectTcp({ host: lan, port: localPort }, () => resolve(true));
        sock.once('error', () => resolve(false));
      });
      assert.equal(reached, false, `the tunnel port must not answer on ${lan}`);
    }
  } finally {
    stop.abort();
    await run;
  }
  assert.deepEqual([...new Set(seen.tcpip)], ['127.0.0.1:8123']);
  assert.equal(seen.sessions, 0, 'no session channel: no command, no shell');
  assert.deepEqual([seen.commands, seen.requests], [[], []], 'no exec, no agent forwarding, no pty');
  assert.equal(endpointOf(stateDir, 'rec')?.enabled, false, 'a clean stop disables the endpoint');
});

test('a changed host key is refused before any authentication (nothing sent, nothing run)', async () => {
  mode = 'accept';
  const r = await connect(sshConfig('wrong', { knownHosts: knownHosts('kh-wrong', foreignKey.pub), identity: clientKey.key }));
  assert.equal(r.ok, false);
  assert.match(r.error, /^unreachable: .*(host key|fingerprint)/i);
  assert.deepEqual(seen.methods, [], 'no auth attempt after a bad host key');
  assert.deepEqual(seen.commands, []);
});

test('an unknown host is refused unless the user\'s own ssh config opts out (then with a warning, never silently)', async () => {
  mode = 'accept';
  writeFileSync(path.join(tmp.dir, 'kh-empty'), '');
  for (const extra of [[], ['  StrictHostKeyChecking yes'], ['  StrictHostKeyChecking ask']]) {
    const r = await connect(sshConfig('unknown', { knownHosts: path.join(tmp.dir, 'kh-empty'), identity: clientKey.key, extra }));
    assert.equal(r.ok, false, `${extra.join(' ') || 'default'} should refuse`);
    assert.match(r.error, /unknown host key/);
    assert.deepEqual(seen.commands, []);
  }
});

test('a changed host key is refused even when the ssh config says StrictHostKeyChecking no or accept-new', async () => {
  mode = 'accept';
  for (const v of ['no', 'accept-new']) {
    const r = await connect(sshConfig('wrong-no', { knownHosts: knownHosts('kh-wrong-no', foreignKey.pub), identity: clientKey.key, extra: [`  StrictHostKeyChecking ${v}`] }));
    assert.equal(r.ok, false, v);
    assert.match(r.error, /HOST KEY CHANGED/);
    assert.deepEqual(seen.methods, []);
  }
});

test('no password or keyboard-interactive attempt when keys fail, even when the server offers them (batch mode)', async () => {
  mode = 'reject-all';
  const started = Date.now();
  const r = await connect(sshConfig('nokey', { knownHosts: knownHosts('kh-nokey', hostKey.pub), identity: clientKey.key, extra: ['  PasswordAuthentication yes', '  KbdInteractiveAuthentication yes', '  BatchMode no'] }));
  assert.equal(r.ok, false);
  assert.match(r.error, /^unreachable: /);
  assert.ok(seen.methods.length > 0, 'the client did try to authenticate');
  for (const m of seen.methods) assert.ok(['none', 'publickey'].includes(m), `tried ${m}`);
  assert.ok(Date.now() - started < 60_000, 'it failed on its own, it did not wait for input');
});

test('through the CLI: a simulated node with a wrong known_hosts entry is refused and nothing runs there', async () => {
  sim = await startSim({ nodes: ['simA'], readyDelayMs: 100 });
  const kh = path.join(tmp.dir, 'sim-kh-wrong');
  const cfg = path.join(tmp.dir, 'sim-config-wrong');
  sim.writeKnownHosts(kh, { wrongKey: { aliases: ['simA'], key: sim.foreignHostKey } });
  sim.writeSshConfig(cfg, kh);
  const nodes = path.join(tmp.dir, 'sim-nodes.json');
  sim.writeNodesJson(nodes, { protected: [] });
  const before = sim.node('simA').dockerCalls().length;
  const r = await runCli(['model', 'up', 'best', '--node', 'simA', '--dry-run', '--preflight', '--nodes', nodes], { PULSE_SSH_CONFIG: cfg, PULSE_STATE_DIR: path.join(tmp.dir, 'st') });
  assert.equal(r.code, 6, r.stdout + r.stderr);
  assert.match(r.stderr, /host key|fingerprint/i);
  assert.equal(sim.node('simA').dockerCalls().length, before, 'no node script ran');
  // The control: the right known_hosts reaches the same node.
  const ok = await runCli(['model', 'up', 'best', '--node', 'simA', '--dry-run', '--preflight', '--nodes', nodes], { ...sim.env(), PULSE_STATE_DIR: path.join(tmp.dir, 'st') });
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
});
