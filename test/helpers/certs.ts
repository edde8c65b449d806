/**
 * Throwaway mTLS material for the cluster tier, made with openssl in a 0700 temp dir (keys 0600): a CA, a server
 * certificate from it (SAN IP:127.0.0.1 and DNS:localhost), a client certificate from it, and a second CA with a
 * client certificate of its own (a client the server must refuse). EC P-256 keys: fast to make, and accepted by
 * the Go server, the SDK's rustls and openssl alike.
 *
 *   const certs = await makeCerts();
 *   try { ... certs.ca, certs.server.cert, certs.client.key ... } finally { await certs.remove(); }
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { removeDir, tempDir } from './cli.js';

const run = promisify(execFile);

export interface CertPair {
  cert: string;
  key: string;
}

export interface TestCerts {
  dir: string;
  /** The CA that signs the server and the accepted client (the server trusts it for client certificates too). */
  ca: string;
  server: CertPair;
  client: CertPair;
  /** A CA the server does not know, and a client certificate it signed. */
  otherCa: string;
  otherClient: CertPair;
  remove(): Promise<void>;
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args, { timeout: 30_000 });
  } catch (e) {
    const err = e as Error & { stderr?: string };
    throw new Error(`openssl ${args[0]} failed: ${err.stderr ?? err.message}`);
  }
}

/** A self-signed CA (basicConstraints CA:TRUE, keyCertSign), valid for a day. */
async function makeCa(dir: string, name: string): Promise<CertPair> {
  const cert = path.join(dir, `${name}.pem`);
  const key = path.join(dir, `${name}.key`);
  await openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', `/CN=pulse test ${name}`, '-keyout', key, '-out', cert,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  chmodSync(key, 0o600);
  return { cert, key };
}

/** A leaf certificate signed by `ca`, with the extended key usage and SANs given. */
async function makeLeaf(dir: string, name: string, ca: CertPair, usage: string, san?: string): Promise<CertPair> {
  const cert = path.join(dir, `${name}.pem`);
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, `${name}.ext`);
  writeFileSync(ext, [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    `extendedKeyUsage=${usage}`,
    ...(san ? [`subjectAltName=${san}`] : []),
    '',
  ].join('\n'));
  await openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${name}`, '-keyout', key, '-out', csr]);
  chmodSync(key, 0o600);
  await openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-set_serial', `0x${randomBytes(8).toString('hex')}`, '-days', '1', '-sha256', '-extfile', ext, '-out', cert]);
  return { cert, key };
}

export async function makeCerts(): Promise<TestCerts> {
  const dir = await tempDir('pulse-certs-');
  chmodSync(dir, 0o700);
  try {
    const [ca, other] = await Promise.all([makeCa(dir, 'ca'), makeCa(dir, 'other-ca')]);
    const [server, client, otherClient] = await Promise.all([
      makeLeaf(dir, 'server', ca, 'serverAuth,clientAuth', 'IP:127.0.0.1,DNS:localhost'),
      makeLeaf(dir, 'client', ca, 'clientAuth'),
      makeLeaf(dir, 'other-client', other, 'clientAuth'),
    ]);
    return { dir, ca: ca.cert, server, client, otherCa: other.cert, otherClient, remove: () => removeDir(dir) };
  } catch (e) {
    await removeDir(dir);
    throw e;
  }
}
