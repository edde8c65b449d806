/** The client side of the sim's ssh: a client key, an ssh config with one Host per node, and known_hosts. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export interface HostEntry {
  alias: string;
  address: string;
  port: number;
  /** `ssh-ed25519 AAAA... comment` */
  hostKey: string;
}

/** The known_hosts entry name ssh looks up: plain host for port 22, `[host]:port` otherwise. */
export function knownHostsName(address: string, port: number): string {
  return port === 22 ? address : `[${address}]:${port}`;
}

export interface KnownHostsOptions {
  /** Hash the host names like `HashKnownHosts yes` (ssh-keygen -H). */
  hashed?: boolean;
  /** Leave these aliases out (an unknown host). */
  omit?: string[];
  /** Give these aliases this other key instead of the real one (a changed host key). */
  wrongKey?: { aliases: string[]; key: string };
}

/** Writes a known_hosts file for the hosts. */
export function writeKnownHosts(file: string, hosts: HostEntry[], opts: KnownHostsOptions = {}): void {
  const lines = hosts
    .filter((h) => !opts.omit?.includes(h.alias))
    .map((h) => {
      const key = opts.wrongKey?.aliases.includes(h.alias) ? opts.wrongKey.key : h.hostKey;
      return `${knownHostsName(h.address, h.port)} ${key}`;
    });
  fs.writeFileSync(file, lines.join('\n') + (lines.length ? '\n' : ''), { mode: 0o600 });
  if (opts.hashed && lines.length) {
    execFileSync('ssh-keygen', ['-q', '-H', '-f', file], { stdio: 'ignore' });
    fs.rmSync(`${file}.old`, { force: true });
  }
}

/** Writes an ssh config with one `Host <alias>` block per node. */
export function writeSshConfig(file: string, hosts: HostEntry[], identityFile: string, knownHostsFile: string): void {
  const blocks = hosts.map((h) =>
    [
      `Host ${h.alias}`,
      `  HostName ${h.address}`,
      `  Port ${h.port}`,
      '  User root',
      `  IdentityFile ${identityFile}`,
      '  IdentitiesOnly yes',
      `  UserKnownHostsFile ${knownHostsFile}`,
      '  GlobalKnownHostsFile /dev/null',
      '  StrictHostKeyChecking yes',
      '  BatchMode yes',
      '  LogLevel ERROR',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(file, `# pulse simulator nodes (test/sim)\n${blocks.join('\n')}`, { mode: 0o600 });
}
