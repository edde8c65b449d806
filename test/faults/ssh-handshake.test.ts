/**
 * A link lost in the middle of the ssh handshake (after the server's version line, before authentication) must
 * fail the connect as `unreachable`, so the step is retried. ssh2 emits only 'end'/'close' then, no 'error'; the
 * fault suite's ssh cuts found steps hanging (heartbeating, never settling) until their start-to-close timeout.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { isPulseError } from '../../runtime/errors.js';
import { openSshTransport } from '../../runtime/node/ssh.js';
import { scratch } from '../fuzz/gen.js';

const tmp = scratch('pulse-ssh-cut-');
const saved = process.env['PULSE_SSH_CONFIG'];
after(() => {
  if (saved === undefined) delete process.env['PULSE_SSH_CONFIG'];
  else process.env['PULSE_SSH_CONFIG'] = saved;
  tmp.cleanup();
});

for (const when of ['before the version line', 'after the version line', 'after the key exchange started'] as const) {
  test(`a link cut ${when} fails the connect as unreachable (it never hangs)`, async () => {
    const server = net.createServer((s) => {
      if (when === 'before the version line') return void s.destroy();
      s.write('SSH-2.0-OpenSSH_9.6\r\n');
      s.once('data', () => (when === 'after the version line' ? s.destroy() : setTimeout(() => s.destroy(), 100)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const key = path.join(tmp.dir, `id-${when.length}`);
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
      const cfg = path.join(tmp.dir, `config-${when.length}`);
      const port = (server.address() as net.AddressInfo).port;
      writeFileSync(cfg, `Host cut\n  HostName 127.0.0.1\n  Port ${port}\n  User root\n  IdentityFile ${key}\n  IdentitiesOnly yes\n  UserKnownHostsFile /dev/null\n  ConnectTimeout 60\n`);
      process.env['PULSE_SSH_CONFIG'] = cfg;
      const outcome = await Promise.race([
        openSshTransport({ name: 'cut', host: 'ssh', ssh: 'cut' }).then(
          (t) => t.close().then(() => 'connected'),
          (e: unknown) => e,
        ),
        new Promise((r) => setTimeout(() => r('hung'), 15_000)),
      ]);
      assert.ok(isPulseError(outcome), `expected an unreachable PulseError, got ${String(outcome)}`);
      assert.equal(outcome.kind, 'unreachable');
    } finally {
      server.close();
    }
  });
}
