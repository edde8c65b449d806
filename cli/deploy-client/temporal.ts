/**
 * The only place that builds a Temporal Client/Connection. Address from --temporal / TEMPORAL_ADDRESS, else the
 * embedded dev server; namespace, TLS and API key from Temporal's usual environment variables.
 * The SDK is imported lazily, so `status` can ask `configuredOrRunningServer()` without loading it.
 */
import type { Client, Connection } from '@temporalio/client';
import { PulseError } from '../../runtime/errors.js';
import { trustedStateDir } from '../../runtime/state/state.js';
import { ensureEmbeddedServer, runningEmbeddedServer, type EmbeddedServer } from './embedded-server.js';
import { diagnoseTls } from './temporal-tls-probe.js';
import { quietIpServernameWarning, readTlsEnv, type TlsSettings, type TlsVars } from './temporal-tls.js';

export { tlsFromEnv } from './temporal-tls.js';

type Env = Record<string, string | undefined>;

/** Where pulse talks to Temporal: a configured server, or the embedded one. */
export interface ServerTarget {
  address: string;
  namespace: string;
  tls: TlsSettings | boolean | undefined;
  /** The environment variables the TLS parts came from (named in TLS error messages). */
  tlsVars?: TlsVars;
  apiKey: string | undefined;
  /** The embedded server pulse started, or null for a configured one. */
  embedded: EmbeddedServer | null;
  /** Web UI base URL (embedded: http://127.0.0.1:<uiPort>; configured: --temporal-ui or $PULSE_TEMPORAL_UI), or null. */
  uiBase: string | null;
}

/** A connected client plus what the commands need around it. */
export interface PulseTemporal {
  client: Client;
  connection: Connection;
  target: ServerTarget;
  close(): Promise<void>;
}

/** $PULSE_STATE_DIR, default $XDG_STATE_HOME/pulse/runtime or ~/.local/state/pulse/runtime, refused when another user owns or can write it (runtime/state/state.ts trustedStateDir). */
export function stateDir(env: Env = process.env): string {
  return trustedStateDir(env);
}

type Configured = Omit<ServerTarget, 'embedded' | 'uiBase' | 'address'> & { address: string | undefined };
/** Where the commands say which server to use: --temporal and --temporal-ui (each also from the environment). */
export interface ServerChoice {
  temporal?: string | undefined;
  temporalUi?: string | undefined;
}

function configured(opts: ServerChoice, env: Env): Configured {
  const address = opts.temporal || env['TEMPORAL_ADDRESS'] || undefined;
  const { tls, vars } = address ? readTlsEnv(env) : readTlsEnv({});
  return {
    address,
    namespace: env['TEMPORAL_NAMESPACE'] || 'default',
    tls,
    tlsVars: vars,
    apiKey: address ? env['TEMPORAL_API_KEY'] || undefined : undefined,
  };
}

function uiBaseFor(embedded: EmbeddedServer | null, opts: ServerChoice, env: Env): string | null {
  if (embedded) return `http://${embedded.ip}:${embedded.uiPort}`;
  const ui = opts.temporalUi || env['PULSE_TEMPORAL_UI'];
  return ui ? ui.replace(/\/+$/, '') : null;
}

/** For a configured server without a UI base: the one line that says how to get UI links; else null. */
export function uiHint(target: ServerTarget): string | null {
  if (target.uiBase || target.embedded) return null;
  return 'no Temporal UI link: set PULSE_TEMPORAL_UI (or --temporal-ui) to the UI\'s base URL, e.g. PULSE_TEMPORAL_UI=http://127.0.0.1:8080';
}

/**
 * Cheap, for `status`: the configured server, or the embedded one if it already runs; null when neither.
 * Never starts a server and never loads the Temporal SDK.
 */
export async function configuredOrRunningServer(opts: ServerChoice = {}, env: Env = process.env): Promise<ServerTarget | null> {
  const c = configured(opts, env);
  if (c.address) return { ...c, address: c.address, embedded: null, uiBase: uiBaseFor(null, opts, env) };
  const embedded = await runningEmbeddedServer(stateDir(env));
  return embedded ? { ...c, address: embedded.address, embedded, uiBase: uiBaseFor(embedded, opts, env) } : null;
}

/** The server to use, starting the embedded one when no address is configured. */
export async function resolveServer(opts: ServerChoice, env: Env = process.env): Promise<ServerTarget> {
  const c = configured(opts, env);
  if (c.address) return { ...c, address: c.address, embedded: null, uiBase: uiBaseFor(null, opts, env) };
  const embedded = await ensureEmbeddedServer(stateDir(env));
  return { ...c, address: embedded.address, embedded, uiBase: uiBaseFor(embedded, opts, env) };
}

/** The UI page of one workflow run, or null when no UI base is known. */
export function uiLink(target: ServerTarget, workflowId: string, runId: string | undefined): string | null {
  if (!target.uiBase) return null;
  const ns = encodeURIComponent(target.namespace);
  const id = encodeURIComponent(workflowId);
  return `${target.uiBase}/namespaces/${ns}/workflows/${id}/${runId ? encodeURIComponent(runId) : ''}${runId ? '/history' : ''}`;
}

/** Options for the worker's NativeConnection.connect, so a worker reaches the same server. */
export function workerConnectOptions(target: ServerTarget): { address: string; tls?: TlsSettings | boolean; apiKey?: string } {
  return {
    address: target.address,
    ...(target.tls !== undefined ? { tls: target.tls } : {}),
    ...(target.apiKey ? { apiKey: target.apiKey } : {}),
  };
}

function unreachable(target: ServerTarget, cause: unknown): PulseError {
  const hint = target.embedded
    ? `see the embedded server's log: ${target.embedded.logFile}`
    : 'check that the server runs and TEMPORAL_ADDRESS/--temporal, TEMPORAL_NAMESPACE and the TLS settings are right';
  return new PulseError('temporal', `cannot reach the Temporal server at ${target.address} (namespace ${target.namespace})`, { hint, cause });
}

/** Connects (starting the embedded server when needed), waits until the namespace answers, registers search attributes. */
export async function connectTemporal(opts: ServerChoice, env: Env = process.env): Promise<PulseTemporal> {
  return connectTo(await resolveServer(opts, env));
}

/** Connects to a known target (from configuredOrRunningServer or resolveServer). */
export async function connectTo(target: ServerTarget): Promise<PulseTemporal> {
  const { Client, Connection } = await import('@temporalio/client');
  let connection: Connection;
  if (target.tls || target.apiKey) quietIpServernameWarning();
  try {
    connection = await Connection.connect({
      address: target.address,
      ...(target.tls !== undefined ? { tls: target.tls } : {}),
      ...(target.apiKey ? { apiKey: target.apiKey } : {}),
      connectTimeout: target.embedded ? '20s' : '5s',
    });
    await waitUntilServing(connection, target);
  } catch (e) {
    if (e instanceof PulseError) throw e;
    throw (target.embedded ? null : await diagnoseTls({ ...target, vars: target.tlsVars ?? readTlsEnv({}).vars }, e)) ?? unreachable(target, e);
  }
  await ensureSearchAttributes(connection, target.namespace);
  const client = new Client({ connection, namespace: target.namespace });
  return { client, connection, target, close: () => connection.close() };
}

/** A just-started dev server opens its port a moment before the namespace is ready. */
async function waitUntilServing(connection: Connection, target: ServerTarget): Promise<void> {
  const deadline = Date.now() + (target.embedded ? 30_000 : 5_000);
  for (;;) {
    try {
      await connection.withDeadline(Date.now() + 5000, () =>
        connection.workflowService.describeNamespace({ namespace: target.namespace }),
      );
      return;
    } catch (e) {
      const code = (e as { code?: number }).code;
      if (code === 5) throw new PulseError('temporal', `the Temporal namespace "${target.namespace}" does not exist on ${target.address}`, { hint: 'set TEMPORAL_NAMESPACE', cause: e });
      if (Date.now() > deadline) throw unreachable(target, e);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

const SA_NAMES = ['PulseNode', 'PulseProfile', 'PulseAction', 'PulseOutcome'];
/** How long a connect waits for freshly registered search attributes to reach the frontend's namespace cache. */
const SA_WAIT_MS = 30_000;

/** The gRPC status code of a Temporal call's error (or of the first cause that has one), else undefined. */
function grpcCode(e: unknown): number | undefined {
  for (let cur = e, i = 0; cur instanceof Error && i < 8; cur = cur.cause, i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

/**
 * What the server said, in one line: the innermost message of the cause chain (the SDK wraps a gRPC error as
 * "Failed to start Workflow"), without grpc-js's leading status number ("3 INVALID_ARGUMENT: ..." → "INVALID_ARGUMENT: ...").
 */
export function serverCause(e: unknown): string {
  let msg = e instanceof Error ? e.message : String(e);
  for (let cur = e instanceof Error ? e.cause : undefined, i = 0; cur instanceof Error && i < 8; cur = cur.cause, i++) {
    if (cur.message) msg = cur.message;
  }
  return msg.replace(/^\d+ (?=[A-Z_]+:)/, '').split('\n')[0]!.trim();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Makes PulseNode/PulseProfile/PulseAction/PulseOutcome (Keyword) usable in the namespace: registers the missing ones, then waits
 * (bounded) until the frontend maps them. A real cluster answers from a namespace cache that a fresh namespace or a
 * fresh registration reaches only after its refresh (seconds); a start before that fails with "no mapping defined
 * for search attribute". A server that refuses the registration (no permission, Temporal Cloud) is fine when the
 * attributes are there already, and a one-line error naming the command to register them when they are not.
 */
export async function ensureSearchAttributes(connection: Pick<Connection, 'operatorService' | 'workflowService'>, namespace: string, waitMs = SA_WAIT_MS): Promise<void> {
  const deadline = Date.now() + waitMs;
  let missing: string[] = SA_NAMES;
  try {
    const have = await connection.operatorService.listSearchAttributes({ namespace });
    missing = SA_NAMES.filter((n) => !(n in (have.customAttributes ?? {})));
  } catch {
    // a server that does not list them (no permission): the registration and the probe below tell
  }
  const refused = missing.length > 0 ? await registerSearchAttributes(connection, namespace, missing, deadline) : null;
  await waitUntilMapped(connection, namespace, deadline, refused);
}

/** null once registered (or already there), or the server's refusal (PERMISSION_DENIED, UNIMPLEMENTED). */
async function registerSearchAttributes(connection: Pick<Connection, 'operatorService'>, namespace: string, names: string[], deadline: number): Promise<unknown> {
  const keyword = 2; // IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD (@temporalio/proto is not a direct dependency)
  for (;;) {
    try {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(names.map((n) => [n, keyword])) });
      return null;
    } catch (e) {
      const code = grpcCode(e);
      if (code === 6) return null; // ALREADY_EXISTS: a concurrent pulse won
      if (code === 7 || code === 12) return e; // PERMISSION_DENIED, UNIMPLEMENTED
      // NOT_FOUND: a namespace created a moment ago is not in the frontend's namespace cache yet.
      if (code === 5 && Date.now() < deadline) {
        await sleep(500);
        continue;
      }
      throw new PulseError('temporal', `cannot register the search attributes ${SA_NAMES.join(', ')} in namespace ${namespace}: ${serverCause(e)}`, { cause: e });
    }
  }
}

/** Resolves once a visibility query on all three attributes is accepted, i.e. the namespace maps them. */
async function waitUntilMapped(connection: Pick<Connection, 'workflowService'>, namespace: string, deadline: number, refused: unknown): Promise<void> {
  const query = SA_NAMES.map((n) => `${n} = 'pulse-probe'`).join(' AND ');
  for (;;) {
    let err: unknown;
    try {
      await connection.workflowService.countWorkflowExecutions({ namespace, query });
      return;
    } catch (e) {
      err = e;
    }
    const code = grpcCode(err);
    const unmapped = code === 5 || (code === 3 && /search attribute/i.test(serverCause(err)));
    if (!unmapped) return; // a server that cannot count (no permission): the start itself will say what is wrong
    if (refused) {
      throw new PulseError('temporal', `the Temporal server refused to register the search attributes ${SA_NAMES.join(', ')} in namespace ${namespace}: ${serverCause(refused)}`, {
        hint: `have them registered once (Keyword): temporal operator search-attribute create --namespace ${namespace} ${SA_NAMES.map((n) => `--name ${n}`).join(' ')} --type Keyword`,
        cause: refused,
      });
    }
    if (Date.now() > deadline) {
      throw new PulseError('temporal', `the search attributes ${SA_NAMES.join(', ')} are registered in namespace ${namespace}, but the server still does not map them: ${serverCause(err)}`, {
        hint: 'its namespace cache refreshes every few seconds; run the command again in a moment',
        cause: err,
      });
    }
    await sleep(500);
  }
}
