/**
 * `pulse tunnel`: one NodeTunnel per node with gatewayTunnel in nodes.json, on the gateway host. Every change of a
 * tunnel rewrites $PULSE_STATE_DIR/tunnel.json and then the gateway backend file (publishFragment, under the state
 * lock like every other writer), so a tunnelled endpoint is enabled exactly while its tunnel is up and answers.
 */
import type { NodesConfig } from '../../config/nodes.js';
import { isLoopback } from '../../config/safe.js';
import { PulseError } from '../../errors.js';
import { publishFragment } from '../gateway.js';
import { fleetOf } from '../../plan/plan.js';
import type { NodeTarget } from '../../node/types.js';
import { writeTunnelHealth, type TunnelHealth } from './health.js';
import { DEFAULT_TIMINGS, NodeTunnel, type Opener, type TunnelSpec, type TunnelTimings } from './link.js';

export interface TunnelRunOptions {
  config: NodesConfig;
  stateDir: string;
  /** Ends the run: the listeners close and the endpoints are disabled. */
  signal: AbortSignal;
  log: (line: string) => void;
  timings?: Partial<TunnelTimings>;
  /** Replace how the ssh link is opened (tests). */
  open?: Opener;
  /**
   * nodes.json as it is now, read again before every link and probe: a tunnel follows its node's ssh target, and
   * stops using a link whose node lost its tunnel (its endpoint is then disabled). Absent: `config` throughout.
   */
  reload?: () => NodesConfig;
}

/** The tunnels nodes.json asks for (the config rules already checked host ssh, loopback BIND, unique ports). */
export function tunnelSpecs(config: NodesConfig): TunnelSpec[] {
  const out: TunnelSpec[] = [];
  for (const [name, node] of Object.entries(config.nodes)) {
    if (!node.gatewayTunnel || node.host !== 'ssh' || !isLoopback(node.env.BIND)) continue;
    const remoteHost = node.env.BIND === '[::1]' ? '::1' : node.env.BIND;
    out.push({ node: name, target: { name, host: 'ssh', ssh: node.ssh }, localPort: node.gatewayTunnel.localPort, remoteHost, remotePort: Number(node.env.PORT) });
  }
  return out;
}

/** A tunnelled node's target in nodes.json as it is now; refused when the file no longer asks for its tunnel. */
function targetNow(config: NodesConfig, name: string): NodeTarget {
  const spec = tunnelSpecs(config).find((s) => s.node === name);
  if (!spec) throw new PulseError('config', `${config.file}: ${name} no longer has a gatewayTunnel over ssh; its tunnel stays down until pulse tunnel restarts`);
  return spec.target;
}

/**
 * Run the tunnels until `signal` aborts. Throws before any tunnel runs when none is configured. A tunnel whose port
 * cannot be bound fails alone (link.ts): the others run on, and the gateway file says why its endpoint is disabled.
 */
export async function runTunnels(opts: TunnelRunOptions): Promise<void> {
  const specs = tunnelSpecs(opts.config);
  if (specs.length === 0) {
    throw new PulseError('config', `${opts.config.file}: no node has gatewayTunnel; pulse tunnel has nothing to do`, {
      hint: 'add "gatewayTunnel": { "localPort": 18002 } to a node whose BIND is loopback (docs/GATEWAY.md)',
    });
  }
  const fleet = fleetOf(opts.config);
  const timings = { ...DEFAULT_TIMINGS, ...opts.timings };
  const health: TunnelHealth = { pid: process.pid, startedAt: new Date().toISOString(), updatedAt: '', nodes: {} };
  const enabled = new Map<string, boolean>();
  let queue = Promise.resolve();
  const tunnels: NodeTunnel[] = [];
  const publish = async (): Promise<void> => {
    health.updatedAt = new Date().toISOString();
    health.nodes = Object.fromEntries(tunnels.map((t) => [t.spec.node, { ...t.health }]));
    writeTunnelHealth(opts.stateDir, health);
    const r = await publishFragment(opts.stateDir, fleet);
    for (const e of r.endpoints.filter((x) => specs.some((s) => s.node === x.name))) {
      if (enabled.get(e.name) === e.enabled) continue;
      enabled.set(e.name, e.enabled);
      opts.log(`${e.name}: endpoint ${e.enabled ? 'enabled' : 'disabled'} in ${r.path}${e.reason ? ` (${e.reason})` : ''}`);
    }
  };
  // One write at a time, in order: the last change always wins on disk.
  const changed = (): void => {
    queue = queue.then(publish).catch((e: unknown) => opts.log(`warning: cannot publish the tunnel's health: ${(e as Error).message}`));
  };
  for (const spec of specs) {
    const reload = opts.reload;
    if (reload) {
      let last = spec.target;
      let warned = '';
      spec.targetNow = () => {
        let config: NodesConfig;
        try {
          config = reload();
        } catch (e) {
          // A file that does not parse says nothing new (a typo, or an editor's half-written save): the tunnel keeps
          // the target it last read, and says so once per error. Only a file that parses can move or end a tunnel.
          const why = (e as Error).message;
          if (why !== warned) opts.log(`${spec.node}: warning: nodes.json cannot be read (${why}); keeping ssh ${last.ssh ?? last.name} as last read`);
          warned = why;
          return last;
        }
        warned = '';
        return (last = targetNow(config, spec.node));
      };
    }
    tunnels.push(new NodeTunnel(spec, timings, changed, opts.log, opts.open));
  }
  try {
    for (const t of tunnels) t.start();
    if (!opts.signal.aborted) await new Promise<void>((resolve) => opts.signal.addEventListener('abort', () => resolve(), { once: true }));
  } finally {
    await Promise.all(tunnels.map((t) => t.close()));
    health.stoppedAt = new Date().toISOString();
    changed();
    await queue;
  }
}
