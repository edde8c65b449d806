/**
 * verify reads the container log as a stream, never a copy (issue 10 item 7): a 24 MiB `docker logs` whose KV cache
 * line and proof texts come last, with /tmp a 1 MiB tmpfs in a private mount namespace (as on a node whose /tmp is
 * small). A copy of the log would not fit, and the findings would be lost; the stream finds them all, writes
 * nothing to /tmp, and sends back one bounded record per finding.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseRecords } from '../../runtime/node/records.js';
import { scriptText } from '../../runtime/node/script.js';
import { shellQuote } from '../../runtime/node/quote.js';
import { REPO_ROOT } from '../helpers/paths.js';

const KV = 'INFO 12-02 10:00:00 [kv_cache_utils.py:716] GPU KV cache size: 2,378,592 tokens';
const PROOFS = ['MTP draft head: FP8 rowwise copy engaged', 'block-drop backport: enabled'];

test('verify finds the KV line and proofs at the end of a 24 MiB docker log with a 1 MiB /tmp, copying nothing', () => {
  mkdirSync(join(REPO_ROOT, 'test-output'), { recursive: true });
  const dir = mkdtempSync(join(REPO_ROOT, 'test-output', 'verify-logs-'));
  try {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    // A docker whose `logs` prints 24 MiB of engine lines, then the findings (and a line longer than any record); its
    // daemon answers `version` (a script asks it after any other call fails, to tell a dead daemon from a missing
    // container), and every other call fails as on a node without this container.
    writeFileSync(join(bin, 'docker'), `#!/bin/bash
[[ $1 != version ]] || { echo 20.10.24; exit 0; }
[[ $1 == logs ]] || exit 1
yes 'INFO 12-02 10:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 812.4 tokens/s' | head -n 300000
printf '%s\\n' ${shellQuote(`${KV} ${'x'.repeat(5000)}`)} ${PROOFS.map((p) => shellQuote(`INFO ${p}`)).join(' ')}
`);
    chmodSync(join(bin, 'docker'), 0o755);
    const inputs = { PULSE_ENV_PATH: join(dir, 'none.env'), PULSE_PORT: '1', PULSE_PROBE_HOST: '127.0.0.1', PULSE_CONTAINER: 'vllm-qwen38', PULSE_PROOFS: [...PROOFS, 'never logged'].join('\n'), PULSE_LOG_PATH: '', PULSE_STAMP: 'x' };
    // The /tmp usage goes out on stderr: a file would be hidden when the checkout itself lies under /tmp (CI clones).
    // The fake docker is reached through the outer shell's working directory (/proc/$$/cwd), which the tmpfs does
    // not hide even when the checkout itself lies under /tmp (a CI clone there).
    const setup = `cd ${shellQuote(dir)} && mount -t tmpfs -o size=1m tmpfs /tmp && PATH=/proc/$$/cwd/bin:$PATH bash -s; rc=$?; echo "tmp-after-kib $(du -sk /tmp | cut -f1)" >&2; umount /tmp; exit $rc`;
    const r = spawnSync('unshare', ['-m', 'bash', '-c', setup], { input: scriptText('verify', inputs), encoding: 'utf8', maxBuffer: 1 << 20 });
    assert.equal(r.status, 0, r.stderr);
    const recs = parseRecords(r.stdout);
    const kv = recs.find((x) => x.kind === 'kv-cache');
    assert.ok(String(kv?.line).startsWith(KV), `the KV cache line at the end of the log was found: ${r.stdout.slice(0, 2000)} ${r.stderr.slice(0, 2000)}`);
    assert.ok(String(kv?.line).length <= 1000, 'the line is cut: the output is bounded');
    assert.deepEqual(recs.filter((x) => x.kind === 'proof').map((x) => [x.text, x.found]), [[PROOFS[0], true], [PROOFS[1], true], ['never logged', false]]);
    assert.ok(r.stdout.length < 8192, `the script sent back ${r.stdout.length} bytes`);
    assert.match(r.stderr, /^tmp-after-kib 0$/m, 'nothing was written to /tmp');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
