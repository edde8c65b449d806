/**
 * The only place that builds a Temporal Client/Connection. Address from --temporal / TEMPORAL_ADDRESS, else the
 * embedded dev server; namespace, TLS and API key from Temporal's usual environment variables.
 * The SDK is imported lazily, so `status` can ask `configuredOrRunningServer()` without loading it.
 */
import type { Client, Connection } from '@temporalio/client';
import { PulseError } from '../runtime/errors.js';
import { defaultStateDir } from '../runtime/state.js';
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
  /** Web UI base URL (embedded: http://127.0.0.1:<uiPort>; configured: $PULSE_TEMPORAL_UI), or null. */
  uiBase: string | null;
}

/** A connected client plus what the commands need around it. */
export interface PulseTemporal {
  client: Client;
  connection: Connection;
  target: ServerTarget;
  close(): Promise<void>;
}

/** $PULSE_STATE_DIR, default $XDG_STATE_HOME/pulse/runtime or ~/.local/state/pulse/runtime (runtime/state.ts). */
export function stateDir(env: Env = process.env): string {
  return defaultStateDir(env);
}

type Configured = Omit<ServerTarget, 'embedded' | 'uiBase' | 'address'> & { address: string | undefined };

function configured(opts: { temporal?: string | undefined }, env: Env): Configured {
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

function uiBaseFor(embedded: EmbeddedServer | null, env: Env): string | null {
  if (embedded) return `http://${embedded.ip}:${embedded.uiPort}`;
  const ui = env['PULSE_TEMPORAL_UI'];
  return ui ? ui.replace(/\/+$/, '') : null;
}

/**
 * Cheap, for `status`: the configured server, or the embedded one if it already runs; null when neither.
 * Never starts a server and never loads the Temporal SDK.
 */
export async function configuredOrRunningServer(opts: { temporal?: string | undefined } = {}, env: Env = process.env): Promise<ServerTarget | null> {
  const c = configured(opts, env);
  if (c.address) return { ...c, address: c.address, embedded: null, uiBase: uiBaseFor(null, env) };
  const embedded = await runningEmbeddedServer(stateDir(env));
  return embedded ? { ...c, address: embedded.address, embedded, uiBase: uiBaseFor(embedded, env) } : null;
}

/** The server to use, starting the embedded one when no address is configured. */
export async function resolveServer(opts: { temporal?: string | undefined }, env: Env = process.env): Promise<ServerTarget> {
  const c = configured(opts, env);
  if (c.address) return { ...c, address: c.address, embedded: null, uiBase: uiBaseFor(null, env) };
  const embedded = await ensureEmbeddedServer(stateDir(env));
  return { ...c, address: embedded.address, embedded, uiBase: uiBaseFor(embedded, env) };
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
export async function connectTemporal(opts: { temporal?: string | undefined }, env: Env = process.env): Promise<PulseTemporal> {
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

const SA_NAMES = ['PulseNode', 'PulseProfile', 'PulseAction'];

/** Registers the Keyword search attributes idempotently (AlreadyExists is fine; a server that forbids it too). */
async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const keyword = 2; // IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD (@temporalio/proto is not a direct dependency)
  try {
    const have = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = SA_NAMES.filter((n) => !(n in (have.customAttributes ?? {})));
    if (missing.length === 0) return;
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map((n) => [n, keyword])) });
  } catch (e) {
    const code = (e as { code?: number }).code;
    // 6 ALREADY_EXISTS (a concurrent pulse won), 7 PERMISSION_DENIED / 12 UNIMPLEMENTED (e.g. Temporal Cloud: register in its UI).
    if (code === 6 || code === 7 || code === 12) return;
    throw new PulseError('temporal', `cannot register the search attributes ${SA_NAMES.join(', ')} in namespace ${namespace}`, { cause: e });
  }
}
