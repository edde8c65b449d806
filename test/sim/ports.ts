/** Free TCP ports for the sim: random below the kernel's ephemeral range, so outgoing sockets never take them. */
import net from 'node:net';

const LOW = 20000;
const HIGH = 32000;
const taken = new Set<number>();

function tryListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** A port that is free on `host` now and not handed out before by this process. */
export async function pickPort(host: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (taken.has(port)) continue;
    if (await tryListen(host, port)) {
      taken.add(port);
      return port;
    }
  }
  throw new Error(`no free port on ${host} in ${LOW}-${HIGH}`);
}
