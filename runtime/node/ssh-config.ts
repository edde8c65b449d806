/**
 * Resolves an ssh alias the way the user's ssh does: `ssh -G [-F $PULSE_SSH_CONFIG] alias`. pulse then connects
 * with ssh2 using exactly these values, so nodes.json can say `"ssh": "spark2"` like the user's shell does.
 */
import { execFile } from 'node:child_process';
import { homedir } from 'node:os';
import { PulseError } from '../errors.js';

export interface SshSettings {
  alias: string;
  hostname: string;
  user: string;
  port: number;
  identityFiles: string[];
  /** Jump hosts (`ProxyJump a,b`), empty when none. */
  proxyJump: string[];
  proxyCommand: string | null;
  strictHostKeyChecking: string;
  knownHostsFiles: string[];
  hostKeyAlias: string | null;
  connectTimeoutS: number | null;
  /** IdentitiesOnly yes: use the IdentityFiles only, not every key the agent holds. */
  identitiesOnly: boolean;
}

function expandHome(p: string): string {
  return p === '~' ? homedir() : p.startsWith('~/') ? `${homedir()}${p.slice(1)}` : p;
}

/** Parse `ssh -G` output (lower-case keys, repeated keys accumulate). */
export function parseSshG(alias: string, out: string): SshSettings {
  const all = new Map<string, string[]>();
  for (const line of out.split('\n')) {
    const m = /^(\S+)\s+(.*)$/.exec(line.trim());
    if (!m || !m[1] || m[2] === undefined) continue;
    const key = m[1].toLowerCase();
    all.set(key, [...(all.get(key) ?? []), m[2]]);
  }
  const one = (k: string): string | null => all.get(k)?.[0] ?? null;
  const words = (k: string): string[] => (all.get(k) ?? []).flatMap((v) => v.split(/\s+/)).filter((v) => v !== '' && v !== 'none');
  const jump = one('proxyjump');
  const proxyCommand = one('proxycommand');
  const timeout = Number(one('connecttimeout'));
  return {
    alias,
    hostname: one('hostname') ?? alias,
    user: one('user') ?? process.env.USER ?? 'root',
    port: Number(one('port') ?? 22) || 22,
    identityFiles: (all.get('identityfile') ?? []).map(expandHome),
    proxyJump: jump && jump !== 'none' ? jump.split(',').map((s) => s.trim()).filter(Boolean) : [],
    proxyCommand: proxyCommand && proxyCommand !== 'none' ? proxyCommand : null,
    strictHostKeyChecking: (one('stricthostkeychecking') ?? 'ask').toLowerCase(),
    knownHostsFiles: [...words('userknownhostsfile'), ...words('globalknownhostsfile')].map(expandHome),
    hostKeyAlias: one('hostkeyalias'),
    connectTimeoutS: Number.isFinite(timeout) && timeout > 0 ? timeout : null,
    identitiesOnly: ['yes', 'true'].includes((one('identitiesonly') ?? 'no').toLowerCase()),
  };
}

/** Run `ssh -G` for an alias (with -F $PULSE_SSH_CONFIG when set). */
export function resolveSsh(alias: string): Promise<SshSettings> {
  if (alias.startsWith('-')) return Promise.reject(new PulseError('config', `invalid ssh target ${JSON.stringify(alias)}`));
  const args = [...(process.env.PULSE_SSH_CONFIG ? ['-F', process.env.PULSE_SSH_CONFIG] : []), '-G', '--', alias];
  return new Promise((resolve, reject) => {
    execFile('ssh', args, { timeout: 10_000 }, (err, stdout, stderr) => {
      if (err) {
        const why = stderr.toString().trim().split('\n').pop() || err.message;
        // ssh -G reads only config files: its failure is a broken ssh config, which a retry cannot fix.
        reject(new PulseError('config', `${alias}: cannot resolve the ssh config with ssh -G: ${why}`, { cause: err }));
        return;
      }
      resolve(parseSshG(alias, stdout.toString()));
    });
  });
}
