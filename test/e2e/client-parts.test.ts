/** The client's pure parts, table-driven: printer, poller liveness, exit codes, rollback hint, history query, TLS env. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProgressPrinter } from '../../cli/progress-printer.js';
import { pollerAlive } from '../../cli/deploy-client/index.js';
import { exitCodeOf } from '../../cli/exit-codes.js';
import { rollbackHintOf } from '../../cli/commands/up.js';
import { historyQuery } from '../../cli/commands/history.js';
import { tlsFromEnv, uiLink } from '../../cli/deploy-client/temporal.js';
import { explainHandshake, type Handshake, type TlsTarget } from '../../cli/deploy-client/temporal-tls-probe.js';
import { readTlsEnv } from '../../cli/deploy-client/temporal-tls.js';
import { startDevArgs } from '../../cli/deploy-client/embedded-server.js';
import type { DeployResult, NodeState, WaitProgress } from '../../runtime/model/index.js';

function sink(isTTY: boolean) {
  const out = { text: '', isTTY, write: (s: string) => (out.text += s) };
  return out;
}
const wait = (attempt: number, elapsedS: number): WaitProgress => ({ step: 'readiness', attempt, lastAnswer: 'HTTP 503', elapsedS, timeoutS: 2100 });

test('on a TTY the wait line is rewritten in place and cleared before the next step line', () => {
  const out = sink(true);
  const p = new ProgressPrinter(out, Date.now, null, { env: { NO_COLOR: '1' } });
  p.waitProgress(wait(1, 1));
  p.waitProgress(wait(2, 2));
  p.stepEnded('7/9 readiness on n', 'ok', 2500, null);
  assert.equal(out.text, '  … readiness: 1s of 35m00s, last answer HTTP 503 (probe 1)\r\x1b[2K  … readiness: 2s of 35m00s, last answer HTTP 503 (probe 2)\r\x1b[2K✓ 7/9 readiness on n (2.5s)\n');
});

// Issue 18: off a terminal one wait line per phase change and at most one heartbeat a minute (it was every 30 s).
test('without a TTY a wait line is printed when its phase starts, then at most once a minute', () => {
  let now = 0;
  const out = sink(false);
  const p = new ProgressPrinter(out, () => now);
  p.waitProgress(wait(1, 0));
  now = 59_000;
  p.waitProgress(wait(60, 59));
  now = 60_000;
  p.waitProgress(wait(61, 60));
  assert.deepEqual(out.text.trim().split('\n').map((l) => /probe (\d+)/.exec(l)?.[1]), ['1', '61']);
});

test('a failed result shows the warnings, the backup path and the rollback command, then the verdict last', () => {
  const out = sink(false);
  const r: DeployResult = {
    ok: false, node: 'n', action: 'up', profile: 'best', mode: 'full', state: 'failed', backupPath: '/r/.env.pulse-bak-1',
    rollbackCommand: 'pulse model up datagen --node n', error: 'readiness: not ready', warnings: ['w1'], clientNotes: ['note'], steps: [],
  };
  new ProgressPrinter(out).outcome({ kind: 'closed', status: 'failed', result: r, error: 'readiness: not ready', errorType: 'DeployFailed' }, 'up best on n');
  // The verdict is the last line, so at 80x24 it is on screen when the command returns.
  assert.equal(out.text, [
    '  warning: w1', '  pulse-client: note', '  backup of the previous .env: /r/.env.pulse-bak-1',
    '  to go back: pulse model rollback --node n --to /r/.env.pulse-bak-1', 'up best on n: FAILED, node failed: readiness: not ready', '',
  ].join('\n'));
});

test('exit code: 0 only on success; failure types map to the CLI exit codes; detach is 130', () => {
  const base = { ok: false, node: 'n', action: 'up', profile: null, mode: 'full', state: 'failed', backupPath: null, rollbackCommand: null, error: 'x', warnings: [], clientNotes: [], steps: [] } as DeployResult;
  const cases: [Partial<DeployResult>, number][] = [[{ ok: true }, 0], [{ errorType: 'Timeout' }, 8], [{ errorType: 'Refused' }, 4], [{ errorType: 'Cancelled' }, 13], [{ errorType: 'TemporaryFailure' }, 12], [{}, 1]];
  for (const [patch, code] of cases) {
    assert.equal(exitCodeOf({ kind: 'closed', status: 'failed', result: { ...base, ...patch }, error: null, errorType: null }), code, JSON.stringify(patch));
  }
  assert.equal(exitCodeOf({ kind: 'detached' }), 130);
});

test('a poller on this host is alive only while its pid lives; a remote one by its last poll', () => {
  const host = os.hostname();
  const now = 1_000_000_000;
  assert.equal(pollerAlive({ identity: `${process.pid}@${host}` }, now, host), true);
  assert.equal(pollerAlive({ identity: `2147483000@${host}` }, now, host), false);
  assert.equal(pollerAlive({ identity: '1@elsewhere', lastAccessTime: { seconds: now / 1000 - 10 } }, now, host), true);
  assert.equal(pollerAlive({ identity: '1@elsewhere', lastAccessTime: { seconds: now / 1000 - 600 } }, now, host), false);
});

test('rollback hint from the saved node state', () => {
  const s = (patch: Partial<NodeState>) => ({ state: 'up', profile: 'datagen', previousProfile: 'capture', ...patch }) as NodeState;
  assert.equal(rollbackHintOf(null, 'n', false), null);
  assert.equal(rollbackHintOf(s({}), 'n', false), 'pulse model up datagen --node n');
  assert.equal(rollbackHintOf(s({ state: 'failed' }), 'n', true), 'pulse model up capture --node n --yes');
  assert.equal(rollbackHintOf(s({ state: 'down' }), 'n', false), 'pulse model down --node n');
});

test('history query filters by node and refuses a name that could break the query', () => {
  assert.equal(historyQuery('spark2'), "(WorkflowType IN ('upWorkflow', 'downWorkflow', 'rollbackWorkflow') OR (WorkflowType = 'watchdogWorkflow' AND PulseOutcome IN ('watchdog-ok', 'watchdog-down'))) AND PulseNode = 'spark2'");
  assert.throws(() => historyQuery("x' OR '1'='1"), /not a valid node name/);
});

test('TLS and the UI link follow the usual environment variables', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-tls-'));
  try {
    for (const f of ['c.pem', 'k.pem', 'ca.pem']) writeFileSync(path.join(dir, f), f);
    const tls = tlsFromEnv({ TEMPORAL_TLS_CERT: path.join(dir, 'c.pem'), TEMPORAL_TLS_KEY: path.join(dir, 'k.pem'), TEMPORAL_TLS_CA: path.join(dir, 'ca.pem'), TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' });
    assert.ok(typeof tls === 'object');
    assert.equal(tls.clientCertPair?.crt.toString(), 'c.pem');
    assert.equal(tls.serverRootCACertificate?.toString(), 'ca.pem');
    assert.equal(tls.serverNameOverride, 'temporal.internal');
    assert.equal(tlsFromEnv({}), undefined);
    assert.equal(tlsFromEnv({ TEMPORAL_TLS: 'true' }), true);
    assert.throws(() => tlsFromEnv({ TEMPORAL_TLS_CERT: 'x' }), /must be set together/);
    assert.throws(() => tlsFromEnv({ TEMPORAL_TLS_CA: path.join(dir, 'missing') }), /TEMPORAL_TLS_CA: cannot read/);
    // Temporal's own names (the temporal CLI's and the SDKs' environment configuration), files or PEM data.
    const std = tlsFromEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'c.pem'), TEMPORAL_TLS_CLIENT_KEY_DATA: 'key-pem', TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.pem') });
    assert.ok(typeof std === 'object');
    assert.equal(std.clientCertPair?.crt.toString(), 'c.pem');
    assert.equal(std.clientCertPair?.key.toString(), 'key-pem');
    assert.equal(std.serverRootCACertificate?.toString(), 'ca.pem');
    assert.equal(tlsFromEnv({ TEMPORAL_TLS: 'false', TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.pem') }), false, 'TEMPORAL_TLS=false wins, as in Temporal');
    assert.throws(() => tlsFromEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: 'x' }), /TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH must be set together/);
    assert.throws(() => tlsFromEnv({ TEMPORAL_TLS_CA: 'a', TEMPORAL_TLS_SERVER_CA_CERT_PATH: 'b' }), /TEMPORAL_TLS_SERVER_CA_CERT_PATH and TEMPORAL_TLS_CA are both set/);
    assert.throws(() => tlsFromEnv({ TEMPORAL_TLS: 'yes' }), /TEMPORAL_TLS must be true or false/);
    assert.throws(() => tlsFromEnv({ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' }), /not supported by pulse: set TEMPORAL_TLS_SERVER_NAME/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const target = { address: 'a:1', namespace: 'prod ns', tls: undefined, apiKey: undefined, embedded: null, uiBase: 'https://ui' };
  assert.equal(uiLink(target, 'pulse-model-x', 'r'), 'https://ui/namespaces/prod%20ns/workflows/pulse-model-x/r/history');
  assert.equal(uiLink({ ...target, uiBase: null }, 'pulse-model-x', 'r'), null);
});

test('the embedded server runs start-dev on loopback with SQLite, the UI on port + 1000 and the search attributes', () => {
  const args = startDevArgs('/s/temporal/dev.db', 7233).join(' ');
  assert.match(args, /^server start-dev --db-filename \/s\/temporal\/dev\.db --ip 127\.0\.0\.1 --port 7233 --ui-port 8233 /);
  assert.match(args, /--dynamic-config-value frontend\.enableServerVersionCheck=false/);
  // One partition per task queue: the worker presence check is then one DescribeTaskQueue per queue (runtime/pollers.ts).
  assert.match(args, /--dynamic-config-value matching\.numTaskqueueReadPartitions=1 --dynamic-config-value matching\.numTaskqueueWritePartitions=1/);
  for (const sa of ['PulseNode', 'PulseProfile', 'PulseAction', 'PulseOutcome']) assert.ok(args.includes(`--search-attribute ${sa}=Keyword`), sa);
});

test('a failed TLS handshake is explained in one line naming the variable to check', () => {
  const vars = readTlsEnv({}).vars;
  const withCert = { clientCertPair: { crt: Buffer.from('c'), key: Buffer.from('k') } };
  const t = (tls: TlsTarget['tls'], apiKey?: string): TlsTarget => ({ address: '10.0.0.1:7233', tls, apiKey, vars });
  const failed = (code: string, message = code): Handshake => ({ kind: 'failed', code, message });
  const cases: [Handshake, TlsTarget, RegExp | null][] = [
    [failed('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED'), t({}), /requires a client certificate: set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH$/],
    [failed('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA'), t(withCert), /refused the client certificate in TEMPORAL_TLS_CLIENT_CERT_PATH \(TLS alert "unknown ca"\)/],
    [failed('ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE'), t(withCert), /TLS alert "bad certificate"/],
    [{ kind: 'closed' }, t(withCert), /closed the connection after the TLS handshake: check that a CA it trusts for clients signed the certificate in TEMPORAL_TLS_CLIENT_CERT_PATH/],
    [failed('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'), t(true), /cannot verify the certificate .*: set TEMPORAL_TLS_SERVER_CA_CERT_PATH to the CA that signed it$/],
    [failed('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), t({ serverRootCACertificate: Buffer.from('x') }), /TEMPORAL_TLS_SERVER_CA_CERT_PATH is not the CA that signed it$/],
    [{ kind: 'failed', code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: '', altNames: 'DNS:temporal' }, t({}), /not valid for 10\.0\.0\.1 \(it lists DNS:temporal\): set TEMPORAL_TLS_SERVER_NAME/],
    [failed('ERR_SSL_WRONG_VERSION_NUMBER'), t({}), /does not answer TLS: unset TEMPORAL_TLS/],
    [failed('ERR_OSSL_X509_KEY_VALUES_MISMATCH'), t(withCert), /the key in TEMPORAL_TLS_CLIENT_KEY_PATH is not the key of the certificate in TEMPORAL_TLS_CLIENT_CERT_PATH/],
    // A plain client against a TLS server; an API key turns TLS on as in the SDK.
    [{ kind: 'accepted' }, t(undefined), /requires TLS: set TEMPORAL_TLS=true/],
    [failed('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED'), t(undefined, 'key'), /requires a client certificate/],
    // Not a TLS problem: the caller's "cannot reach" message stays.
    [failed('ECONNREFUSED'), t({}), null],
    [{ kind: 'silent' }, t({}), null],
    [failed('ECONNRESET'), t(undefined), null],
    [{ kind: 'accepted' }, t(withCert), null],
  ];
  for (const [h, target, want] of cases) {
    const line = explainHandshake(h, target);
    if (want === null) assert.equal(line, null, JSON.stringify(h));
    else {
      assert.match(line ?? '', want, JSON.stringify(h));
      assert.doesNotMatch(line ?? '', /\n/);
    }
  }
});
