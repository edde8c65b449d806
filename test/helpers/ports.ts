/**
 * Free TCP ports on 127.0.0.1 for the servers tests start (Temporal dev servers, metrics and tunnel listeners).
 *
 * Picked below the kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by default), never by
 * asking the kernel for port 0: a port the kernel handed out once is free only until it hands it out again, as the
 * local end of any connect() or the internal listeners a Temporal dev server opens on port 0. A CI run lost a test
 * that way (the UI port, gRPC + 1000, taken between the check and the server's bind). Below the range only another
 * test's explicit bind can take a port, and each is checked free by a listen before it is returned.
 */
import net from 'node:net';
import { readFileSync } from 'node:fs';

const LOW = 20000;

/** The first port of the kernel's ephemeral range (32768 where /proc does not say). */
function ephemeralLow(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > LOW + 2000 ? first : 32768;
  } catch {
    return 32768;
  }
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A port p, free now, with each of p + offsets free too, all below the ephemeral range. */
async function pick(offsets: readonly number[]): Promise<number> {
  const high = ephemeralLow() - 1 - Math.max(0, ...offsets);
  for (let i = 0; i < 200; i++) {
    const p = LOW + Math.floor(Math.random() * (high - LOW));
    let ok = await listenable(p);
    for (const o of offsets) ok = ok && (await listenable(p + o));
    if (ok) return p;
  }
  throw new Error(`no free port found between ${LOW} and ${high}`);
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return pick([]);
}

/** A gRPC port p with p + 1000 (the embedded server's UI port) also free. */
export function freePortPair(): Promise<number> {
  return pick([1000]);
}
