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

/** A port that is free on `host` now and not handed out to this or another live process before. */
export async function pickPort(host: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (taken.has(port)) continue;
    taken.add(port);
    if (reserve(port) && (await tryListen(host, port))) return port;
  }
  throw new Error(`no free port on ${host} in ${LOW}-${HIGH}`);
}
