/**
 * Free TCP ports for the sim: random below the kernel's ephemeral range (so outgoing sockets never take them),
 * and reserved across processes with a file per port: a vLLM port is only bound when a container starts, long
 * after it was picked, so a free-now check alone would let two concurrent test processes pick the same port.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pidAlive } from '../../runtime/state/pid.js';

const LOW = 20000;
const HIGH = 32000;
const RESERVED = path.join(os.tmpdir(), 'pulse-sim-ports');
const taken = new Set<number>();

function tryListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}


/** Claims `port` for this process unless a live process holds it (a dead owner's claim is taken over). */
function reserve(port: number): boolean {
  fs.mkdirSync(RESERVED, { recursive: true });
  const file = path.join(RESERVED, String(port));
  try {
    fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    const owner = Number(fs.readFileSync(file, 'utf8').trim());
    if (owner === process.pid || pidAlive(owner)) return false;
    fs.writeFileSync(file, String(process.pid));
    return true;
  }
}

/** Claims `port` for this process and checks that it is free on `host` now. */
async function claim(host: string, port: number): Promise<boolean> {
  if (taken.has(port)) return false;
  taken.add(port);
  return reserve(port) && (await tryListen(host, port));
}

/**
 * A port p that is free on `host` now and not handed out to this or another live process before, with p + each of
 * `offsets` claimed likewise (freePortPair: the embedded Temporal server's UI port is its gRPC port + 1000).
 */
export async function pickPort(host: string, offsets: readonly number[] = []): Promise<number> {
  const span = Math.max(0, ...offsets);
  for (let i = 0; i < 200; i++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - span - LOW));
    if (!(await claim(host, port))) continue;
    let all = true;
    for (const o of offsets) all = all && (await claim(host, port + o));
    if (all) return port;
  }
  throw new Error(`no free port on ${host} in ${LOW}-${HIGH}`);
}

/**
 * A free port on 127.0.0.1 for a server a test starts (a Temporal dev server, a metrics or tunnel listener). Never
 * one the kernel handed out for port 0: such a port is free only until the kernel hands it out again, as the local
 * end of any connect() or a listener a Temporal dev server opens on port 0 (a CI run lost a test that way: the UI
 * port, checked free, was taken before the server bound it). Below the ephemeral range only another test's explicit
 * bind can take a port, and the reservation keeps concurrent test files from picking the same one.
 */
export function freePort(): Promise<number> {
  return pickPort('127.0.0.1');
}

/** A gRPC port p with p + 1000 (the embedded server's UI port) free and reserved too. */
export function freePortPair(): Promise<number> {
  return pickPort('127.0.0.1', [1000]);
}
