/**
 * verify's port proof when `docker exec` fails (an image without sh or ls), run directly with bash and a fake
 * docker: real SO_REUSEPORT listeners (perl) stand in for the container's vLLM and a stray. The proof then rests on
 * the holders seen on the node: the container's own socket (held by its State.Pid) is proven, and a stray beside it
 * is named as not the container's. The script must finish either way (an exec that lists nothing is no error).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseRecords } from '../../runtime/node/records.js';
import { scriptText } from '../../runtime/node/script.js';
import { REPO_ROOT } from '../helpers/paths.js';

const LISTEN = `use IO::Socket::INET; my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $ARGV[0], Listen => 5, ReuseAddr => 1, ReusePort => 1) or die "listen: $!"; print $s->sockport, "\\n"; STDOUT->flush; while (my $c = $s->accept) { my $l = <$c>; print $c "HTTP/1.0 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\n{}"; close $c }`;

/** A perl process listening with SO_REUSEPORT on 127.0.0.1:port (0: a free one); resolves with it and its port. */
function listener(port: number): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn('perl', ['-e', LISTEN, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve({ child, port: Number(d.toString().trim()) }));
    child.once('exit', (code) => reject(new Error(`listener exited ${code}`)));
  });
}

function verify(dir: string, port: number, containerPid: number): ReturnType<typeof parseRecords> {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'docker'), `#!/bin/bash
case "$1 $2" in
  "container inspect") echo "${containerPid} ${'c'.repeat(64)} host" ;;
  exec*) echo 'OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown' >&2; exit 126 ;;
  *) exit 0 ;;
esac
`);
  chmodSync(join(bin, 'docker'), 0o755);
  const inputs = { PULSE_ENV_PATH: join(dir, 'none.env'), PULSE_PORT: String(port), PULSE_BIND: '127.0.0.1', PULSE_PROBE_HOST: '127.0.0.1', PULSE_CONTAINER: 'vllm-qwen38', PULSE_PROOFS: '', PULSE_LOG_PATH: '', PULSE_STAMP: 'x' };
  const r = spawnSync('bash', ['-s'], { input: scriptText('verify', inputs), encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` } });
  assert.equal(r.status, 0, r.stderr);
  return parseRecords(r.stdout);
}

test('docker exec fails: the container\'s socket is proven by its holder, a stray beside it is named', async () => {
  mkdirSync(join(REPO_ROOT, 'test-output'), { recursive: true });
  const dir = mkdtempSync(join(REPO_ROOT, 'test-output', 'verify-port-'));
  const kids: ChildProcess[] = [];
  try {
    const mine = await listener(0);
    kids.push(mine.child);
    const alone = verify(dir, mine.port, mine.child.pid!);
    const proof = alone.find((x) => x.kind === 'port');
    assert.equal(proof?.proven, true, JSON.stringify(alone));
    assert.match(String(proof?.detail), new RegExp(`every socket on port ${mine.port} \\(1\\) is container vllm-qwen38's \\(pid ${mine.child.pid}\\)$`));

    const stray = await listener(mine.port);
    kids.push(stray.child);
    const shared = verify(dir, mine.port, mine.child.pid!);
    const owners = shared.filter((x) => x.kind === 'port-listener').map((x) => x.owner).sort();
    assert.deepEqual(owners, ['container', 'other'], JSON.stringify(shared));
    const other = shared.find((x) => x.kind === 'port-listener' && x.owner === 'other');
    assert.match(String(other?.holders), new RegExp(`^pid ${stray.child.pid} \\(uid \\d+: perl -e `));
    assert.equal(shared.find((x) => x.kind === 'port')?.shared, true);
  } finally {
    kids.forEach((k) => k.kill('SIGKILL'));
    rmSync(dir, { recursive: true, force: true });
  }
});
