/**
 * ensureSearchAttributes' decisions for the answers a cluster can give (the real cluster paths run in
 * test/cluster/search-attributes.test.ts): a refused registration is fine when the attributes are mapped already and
 * a one-line error naming the registration command when not; a server that never maps them ends in a bounded wait.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ensureSearchAttributes, serverCause } from '../../cli/deploy-client/temporal.js';
import { PulseError } from '../../runtime/errors.js';

const grpcError = (code: number, text: string): Error => Object.assign(new Error(`${code} ${text}`), { code });
const DENIED = grpcError(7, 'PERMISSION_DENIED: Request unauthorized.');
const UNMAPPED = grpcError(3, "INVALID_ARGUMENT: invalid query: invalid expression: column name 'PulseNode' is not a valid search attribute");

function server(opts: { listed: string[]; add: () => void; count: () => void }) {
  const calls = { add: 0, count: 0 };
  const conn = {
    operatorService: {
      listSearchAttributes: async () => ({ customAttributes: Object.fromEntries(opts.listed.map((n) => [n, 2])) }),
      addSearchAttributes: async () => {
        calls.add += 1;
        opts.add();
        return {};
      },
    },
    workflowService: {
      countWorkflowExecutions: async () => {
        calls.count += 1;
        opts.count();
        return {};
      },
    },
  };
  return { conn: conn as unknown as Parameters<typeof ensureSearchAttributes>[0], calls };
}

test('refused registration, attributes not there: one line that says the server refused and how to register them', async () => {
  const { conn } = server({ listed: [], add: () => { throw DENIED; }, count: () => { throw UNMAPPED; } });
  const err = await ensureSearchAttributes(conn, 'prod', 5000).then(() => null, (e: unknown) => e);
  assert.ok(err instanceof PulseError, String(err));
  assert.equal(err.message, 'the Temporal server refused to register the search attributes PulseNode, PulseProfile, PulseAction, PulseOutcome in namespace prod: PERMISSION_DENIED: Request unauthorized.');
  assert.equal(err.hint, 'have them registered once (Keyword): temporal operator search-attribute create --namespace prod --name PulseNode --name PulseProfile --name PulseAction --name PulseOutcome --type Keyword');
});

test('refused registration, attributes already mapped (registered by an operator): fine', async () => {
  const { conn, calls } = server({ listed: ['PulseNode'], add: () => { throw DENIED; }, count: () => undefined });
  await ensureSearchAttributes(conn, 'prod', 5000);
  assert.equal(calls.add, 1);
});

test('all listed and mapped: no registration, one probe', async () => {
  const { conn, calls } = server({ listed: ['PulseNode', 'PulseProfile', 'PulseAction', 'PulseOutcome'], add: () => undefined, count: () => undefined });
  await ensureSearchAttributes(conn, 'default', 5000);
  assert.deepEqual(calls, { add: 0, count: 1 });
});

test('registered but never mapped: the wait is bounded and says so', async () => {
  const { conn, calls } = server({ listed: [], add: () => undefined, count: () => { throw UNMAPPED; } });
  const err = await ensureSearchAttributes(conn, 'slow', 1200).then(() => null, (e: unknown) => e);
  assert.ok(err instanceof PulseError);
  assert.match(err.message, /^the search attributes PulseNode, PulseProfile, PulseAction, PulseOutcome are registered in namespace slow, but the server still does not map them: INVALID_ARGUMENT: /);
  assert.ok(calls.count >= 2, 'it probed more than once');
});

test('serverCause: the innermost message in one line, without grpc-js\'s status number', () => {
  const e = new Error('Failed to start Workflow', { cause: grpcError(3, 'INVALID_ARGUMENT: Namespace x has no mapping defined for search attribute PulseAction\nmore') });
  assert.equal(serverCause(e), 'INVALID_ARGUMENT: Namespace x has no mapping defined for search attribute PulseAction');
  assert.equal(serverCause(new Error('plain')), 'plain');
});
