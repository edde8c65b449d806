/**
 * Why a connection to a configured Temporal server failed, when TLS is the reason. The SDK's gRPC client only
 * says "Failed to connect before the deadline" (it retries a refused handshake until its deadline), so after a
 * failed connect pulse makes one TLS handshake of its own with the same settings and names the problem and the
 * environment variable to check, in one line. A server that never answers is left to the caller's
 * "cannot reach" message.
 */
import net from 'node:net';
import tls from 'node:tls';
import { PulseError } from '../../runtime/errors.js';
import type { TlsSettings, TlsVars } from './temporal-tls.js';

export interface TlsTarget {
  address: string;
  tls: TlsSettings | boolean | undefined;
  apiKey: string | undefined;
  vars: TlsVars;
}

/** What one handshake showed: the server took it (sent its first HTTP/2 bytes), refused it, or never answered. */
export type Handshake =
  | { kind: 'accepted' }
  | { kind: 'failed'; code: string; message: string; altNames?: string }
  /** The handshake completed, then the server hung up without a word (how a Node server refuses a certificate). */
  | { kind: 'closed' }
  | { kind: 'silent' };

const PROBE_MS = 5000;

/** The TLS settings the SDK would use: an API key turns TLS on by default, as in the SDK. */
function effective(t: TlsTarget): TlsSettings | null {
  if (t.tls === false) return null;
  if (t.tls === true) return {};
  if (t.tls === undefined) return t.apiKey ? {} : null;
  return t.tls;
}

function splitAddress(address: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address);
  return m ? { host: m[1] as string, port: Number(m[2]) } : { host: address, port: 7233 };
}

/** One handshake as the SDK's gRPC client makes it (ALPN h2, the same CA, client pair and server name). */
export function handshake(address: string, settings: TlsSettings | null, limitMs = PROBE_MS): Promise<Handshake> {
  const { host, port } = splitAddress(address);
  const name = settings?.serverNameOverride;
  return new Promise((resolve) => {
    let socket: tls.TLSSocket;
    const done = (h: Handshake): void => {
      clearTimeout(timer);
      socket?.destroy();
      resolve(h);
    };
    const timer = setTimeout(() => done({ kind: 'silent' }), limitMs);
    try {
      socket = tls.connect({
        host, port, ALPNProtocols: ['h2'],
        ...(name ? { servername: name } : net.isIP(host) ? {} : { servername: host }),
        ...(name ? { checkServerIdentity: (_h: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(name, cert) } : {}),
        ...(settings?.serverRootCACertificate ? { ca: settings.serverRootCACertificate } : {}),
        ...(settings?.clientCertPair ? { cert: settings.clientCertPair.crt, key: settings.clientCertPair.key } : {}),
        // A plain client asks only whether the server speaks TLS at all.
        rejectUnauthorized: settings !== null,
      });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      done({ kind: 'failed', code: err.code ?? 'ERR_TLS_SETTINGS', message: err.message });
      return;
    }
    // A TLS 1.3 server refuses a client certificate after the client's side of the handshake is done, so the
    // verdict is the server's first bytes (accepted) or its alert (refused).
    let handshook = false;
    socket.on('secureConnect', () => {
      handshook = true;
      if (settings === null) done({ kind: 'accepted' });
    });
    socket.on('data', () => done({ kind: 'accepted' }));
    socket.on('error', (e: NodeJS.ErrnoException & { cert?: { subjectaltname?: string } }) => {
      const altNames = e.cert?.subjectaltname;
      done({ kind: 'failed', code: e.code ?? 'ERR_TLS', message: e.message, ...(altNames ? { altNames } : {}) });
    });
    socket.on('close', () => done({ kind: handshook ? 'closed' : 'silent' }));
  });
}

const UNTRUSTED = ['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE'];
const EXPIRED = ['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID'];
const NOT_TLS = ['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG', 'ERR_SSL_RECORD_LAYER_FAILURE', 'ECONNRESET'];
const NO_ANSWER = ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN'];

/** The alert name in an OpenSSL error code: ERR_SSL_TLSV1_ALERT_UNKNOWN_CA → "unknown ca". */
function alertOf(code: string): string | null {
  const m = /_ALERT_([A-Z_]+)$/.exec(code);
  return m ? (m[1] as string).toLowerCase().replace(/_/g, ' ') : null;
}

/** The one line for a handshake, or null when it does not show a TLS problem. */
export function explainHandshake(h: Handshake, t: TlsTarget): string | null {
  const s = effective(t);
  const at = `the Temporal server at ${t.address}`;
  const v = t.vars;
  if (h.kind === 'silent') return null;
  if (s === null) {
    // A plain client: any TLS answer means the server wants TLS.
    if (h.kind !== 'failed' || alertOf(h.code)) return `${at} requires TLS: set TEMPORAL_TLS=true (and ${v.ca} for a private CA, ${v.cert} and ${v.key} if it asks for a client certificate)`;
    return null;
  }
  if (h.kind === 'accepted') return null;
  if (h.kind === 'closed') {
    return s.clientCertPair
      ? `${at} closed the connection after the TLS handshake: check that a CA it trusts for clients signed the certificate in ${v.cert}`
      : `${at} closed the connection after the TLS handshake: it may require a client certificate (${v.cert} and ${v.key})`;
  }
  const alert = alertOf(h.code);
  if (alert === 'certificate required' || (alert && !s.clientCertPair && alert === 'handshake failure')) {
    return `${at} requires a client certificate: set ${v.cert} and ${v.key}`;
  }
  if (alert && s.clientCertPair) return `${at} refused the client certificate in ${v.cert} (TLS alert "${alert}"): it must be signed by a CA the server trusts for clients`;
  if (UNTRUSTED.includes(h.code)) {
    return s.serverRootCACertificate
      ? `cannot verify the certificate of ${at} (${h.message}): ${v.ca} is not the CA that signed it`
      : `cannot verify the certificate of ${at} (${h.message}): set ${v.ca} to the CA that signed it`;
  }
  if (h.code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `the certificate of ${at} is not valid for ${s.serverNameOverride ?? splitAddress(t.address).host}${h.altNames ? ` (it lists ${h.altNames})` : ''}: set ${v.serverName} to a name it lists`;
  }
  if (EXPIRED.includes(h.code)) return `the certificate of ${at} is out of date (${h.message})`;
  if (NOT_TLS.includes(h.code)) return `${at} does not answer TLS: unset TEMPORAL_TLS and the TEMPORAL_TLS_* variables if it runs without TLS, or check the address`;
  if (NO_ANSWER.includes(h.code)) return null;
  if (h.code === 'ERR_OSSL_X509_KEY_VALUES_MISMATCH') return `the key in ${v.key} is not the key of the certificate in ${v.cert}`;
  if (h.code.startsWith('ERR_OSSL') || h.code === 'ERR_TLS_SETTINGS') return `the TLS files in ${v.cert}, ${v.key} or ${v.ca} do not load: ${h.message}`;
  if (alert) return `${at} refused the TLS handshake (TLS alert "${alert}")`;
  return null;
}

/** After a failed connect: a one-line PulseError when a TLS handshake shows why, else null. */
export async function diagnoseTls(t: TlsTarget, cause: unknown): Promise<PulseError | null> {
  const h = await handshake(t.address, effective(t));
  const line = explainHandshake(h, t);
  return line ? new PulseError('temporal', `TLS: ${line}`, { cause }) : null;
}
