/**
 * TLS to a configured Temporal server: the settings from Temporal's usual client environment variables (the names
 * the temporal CLI and the SDKs' environment configuration read), and, when a connection fails, one TLS handshake
 * of our own that finds out why, so the user reads the TLS problem and the variable to fix instead of the SDK's
 * "Failed to connect before the deadline".
 */
import { readFileSync } from 'node:fs';
import { PulseError } from '../../runtime/errors.js';

type Env = Record<string, string | undefined>;

export interface TlsSettings {
  serverNameOverride?: string;
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
}

/** Which environment variable set each part, so an error can name the one to check. */
export interface TlsVars {
  cert: string;
  key: string;
  ca: string;
  serverName: string;
}

export interface TlsEnv {
  tls: TlsSettings | boolean | undefined;
  vars: TlsVars;
}

/** Temporal's names first (file path, then PEM data), then pulse's older short names, kept working. */
const SOURCES = {
  cert: ['TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_DATA', 'TEMPORAL_TLS_CERT'],
  key: ['TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_DATA', 'TEMPORAL_TLS_KEY'],
  ca: ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_DATA', 'TEMPORAL_TLS_CA'],
} as const;

function readPem(name: string, value: string): Buffer {
  if (name.endsWith('_DATA')) return Buffer.from(value);
  try {
    return readFileSync(value);
  } catch (e) {
    throw new PulseError('config', `${name}: cannot read ${value}: ${(e as Error).message}`);
  }
}

/** The one variable that sets `part` (its name and value), or null; two of them set at once is an error. */
function pick(env: Env, part: keyof typeof SOURCES): { name: string; value: string } | null {
  const set = SOURCES[part].filter((n) => env[n]);
  if (set.length > 1) throw new PulseError('config', `${set.join(' and ')} are both set: keep one (${SOURCES[part][0]} is Temporal's usual name)`);
  const name = set[0];
  return name ? { name, value: env[name] as string } : null;
}

function flag(env: Env, name: string): boolean | undefined {
  const v = (env[name] ?? '').toLowerCase();
  if (v === '') return undefined;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new PulseError('config', `${name} must be true or false, not "${env[name]}"`);
}

/**
 * TLS from TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH/_KEY_PATH/SERVER_CA_CERT_PATH (or their _DATA forms, or
 * the older TEMPORAL_TLS_CERT/KEY/CA) and TEMPORAL_TLS_SERVER_NAME. TEMPORAL_TLS=false turns TLS off whatever else
 * is set, as in Temporal's own environment configuration; undefined = plain unless an API key is set.
 */
export function readTlsEnv(env: Env): TlsEnv {
  const cert = pick(env, 'cert');
  const key = pick(env, 'key');
  const ca = pick(env, 'ca');
  const serverName = env['TEMPORAL_TLS_SERVER_NAME'] || undefined;
  const vars: TlsVars = {
    cert: cert?.name ?? SOURCES.cert[0],
    key: key?.name ?? SOURCES.key[0],
    ca: ca?.name ?? SOURCES.ca[0],
    serverName: 'TEMPORAL_TLS_SERVER_NAME',
  };
  if (Boolean(cert) !== Boolean(key)) throw new PulseError('config', `${vars.cert} and ${vars.key} must be set together`);
  if (flag(env, 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION')) {
    throw new PulseError('config', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported by pulse: set TEMPORAL_TLS_SERVER_NAME to a name in the server certificate instead');
  }
  const enabled = flag(env, 'TEMPORAL_TLS');
  if (enabled === false) return { tls: false, vars };
  if (!cert && !ca && !serverName) return { tls: enabled, vars };
  const settings: TlsSettings = {};
  if (cert && key) settings.clientCertPair = { crt: readPem(cert.name, cert.value), key: readPem(key.name, key.value) };
  if (ca) settings.serverRootCACertificate = readPem(ca.name, ca.value);
  if (serverName) settings.serverNameOverride = serverName;
  return { tls: settings, vars };
}

/** TLS settings only (see readTlsEnv). */
export function tlsFromEnv(env: Env = process.env): TlsSettings | boolean | undefined {
  return readTlsEnv(env).tls;
}

/**
 * Node warns (DEP0123) when a TLS client sends an IP address as SNI, which the SDK's gRPC library does for an
 * address like 127.0.0.1:7233. The certificate is still checked against the IP, so the warning only adds noise
 * to pulse's one-line output: drop that one warning, once, when TLS is in use.
 */
export function quietIpServernameWarning(): void {
  if ((process as { pulseQuietDep0123?: boolean }).pulseQuietDep0123) return;
  (process as { pulseQuietDep0123?: boolean }).pulseQuietDep0123 = true;
  const emit = process.emitWarning.bind(process) as (...a: unknown[]) => void;
  process.emitWarning = ((warning: unknown, ...rest: unknown[]) => {
    const code = typeof rest[0] === 'object' && rest[0] !== null ? (rest[0] as { code?: string }).code : rest[1];
    if (code !== 'DEP0123') emit(warning, ...rest);
  }) as typeof process.emitWarning;
}
