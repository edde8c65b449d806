/**
 * runtime/nodes.json: read → parse (zod, strict) → normalise → check rules. Every error is one line
 * `FILE: path.to.key: message`, with FILE as the user gave it.
 */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { PulseError } from '../errors.js';
import type { NodeTarget } from '../model/index.js';
import { unknownName } from '../suggest.js';
import { displayPath } from '../state/paths.js';
import { parseDockerArgs } from './docker-args.js';
import { NodesFileSchema, type NodeConfig, type NodesFile, type RecipeConfig } from './nodes-schema.js';
import { isLoopback } from './safe.js';
import { fillPlaceholders, placeholderProblem, placeholdersIn } from './substitute.js';

export type { NodeConfig, RecipeConfig } from './nodes-schema.js';

/** The checked nodes.json, with the file it came from and the resolved gateway node. */
export interface NodesConfig extends Omit<NodesFile, 'gatewayNode' | '$schema'> {
  /** The path as the user gave it (for messages). */
  file: string;
  /** gatewayNode, or the first node with host "local", or null when there is none. */
  gatewayNode: string | null;
}

function keyPath(p: readonly PropertyKey[]): string {
  return p.length === 0 ? '(top level)' : p.map(String).join('.');
}

function valueAt(raw: unknown, p: readonly PropertyKey[]): unknown {
  let cur = raw;
  for (const k of p) cur = cur !== null && typeof cur === 'object' ? (cur as Record<PropertyKey, unknown>)[k] : undefined;
  return cur;
}

function issueMessage(iss: z.core.$ZodIssue, raw: unknown): string {
  if (iss.code !== 'unrecognized_keys' && iss.path.length > 0 && valueAt(raw, iss.path) === undefined) {
    return `is required (${issueMessage({ ...iss, path: [] }, undefined).replace(/, got undefined$/, '')})`;
  }
  if (iss.code === 'invalid_key') return `is not a valid key: ${iss.issues[0]?.message ?? iss.message}`;
  if (iss.code === 'unrecognized_keys') {
    return `unknown key${iss.keys.length > 1 ? 's' : ''} ${iss.keys.map((k) => `"${k}"`).join(', ')}`;
  }
  if (iss.code === 'invalid_type') {
    const m = /received (\w+)/.exec(iss.message);
    return `expected ${iss.expected}${m ? `, got ${m[1]}` : ''}`;
  }
  if (iss.code === 'invalid_value') return `expected one of ${iss.values.map((v) => JSON.stringify(v)).join(', ')}`;
  return iss.message.replace(/^Invalid input: /, '');
}

/** The rules zod cannot express: ssh only with host ssh, a known gateway node, reserved and known vars, tunnels. */
function ruleProblems(cfg: NodesFile): string[] {
  const out: string[] = [];
  for (const [name, node] of Object.entries(cfg.nodes)) {
    const at = `nodes.${name}`;
    if (node.host === 'ssh' && node.ssh === undefined) out.push(`${at}.ssh: is required when host is "ssh"`);
    if (node.host === 'local' && node.ssh !== undefined) out.push(`${at}.ssh: must not be set when host is "local"`);
    if (Object.hasOwn(node.vars, 'recipeDir')) out.push(`${at}.vars.recipeDir: is reserved: {{recipeDir}} is always the recipe's dir`);
    for (const [rname, recipe] of Object.entries(node.recipes)) out.push(...recipeProblems(`${at}.recipes.${rname}`, node, recipe));
  }
  if (Object.keys(cfg.nodes).length === 0) out.push('nodes: must hold at least one node');
  if (cfg.gatewayNode !== undefined && !Object.hasOwn(cfg.nodes, cfg.gatewayNode)) {
    out.push(`gatewayNode: ${JSON.stringify(cfg.gatewayNode)} is not a node; known: ${Object.keys(cfg.nodes).join(', ')}`);
  }
  return [...out, ...tunnelProblems(cfg)];
}

/**
 * The servers that listen on the gateway host, by port: the gateway node's, and every other node on that host
 * (another "local" node beside a local gateway node, or one with the same ssh target). A tunnel's local port there
 * would clash with it: the tunnel could not bind, or the server could not start.
 */
function gatewayHostPorts(cfg: NodesFile, gateway: string | null): Map<number, string> {
  const out = new Map<number, string>();
  const g = gateway !== null ? cfg.nodes[gateway] : undefined;
  if (!g) return out;
  for (const [name, node] of Object.entries(cfg.nodes)) {
    const sameHost = name === gateway || (g.host === 'local' ? node.host === 'local' : node.host === 'ssh' && node.ssh === g.ssh);
    const port = Number(node.env.PORT);
    if (sameHost && Number.isInteger(port) && !out.has(port)) out.set(port, name);
  }
  return out;
}

/**
 * gatewayTunnel: only for an ssh node with a loopback BIND that is not the gateway host, one local port each, none
 * the port of a server on the gateway host.
 */
function tunnelProblems(cfg: NodesFile): string[] {
  const out: string[] = [];
  const gateway = cfg.gatewayNode ?? firstLocal(cfg.nodes);
  const servers = gatewayHostPorts(cfg, gateway);
  const ports = new Map<number, string>();
  for (const [name, node] of Object.entries(cfg.nodes)) {
    const t = node.gatewayTunnel;
    if (!t) continue;
    const at = `nodes.${name}.gatewayTunnel`;
    if (node.host !== 'ssh') out.push(`${at}: needs host "ssh" (the tunnel is an ssh port forward from the gateway host)`);
    if (!isLoopback(node.env.BIND)) out.push(`${at}: needs a loopback BIND (the gateway reaches BIND ${node.env.BIND} directly; remove gatewayTunnel)`);
    if (name === gateway) out.push(`${at}: ${name} is the gateway node, which reaches its own server without a tunnel`);
    const other = ports.get(t.localPort);
    if (other !== undefined) out.push(`${at}.localPort: ${t.localPort} is also nodes.${other}.gatewayTunnel.localPort; each tunnel needs its own port`);
    const server = servers.get(t.localPort);
    if (server !== undefined) {
      out.push(`${at}.localPort: ${t.localPort} is also nodes.${server}.env.PORT, the port ${server}'s server listens on on the gateway host; each tunnel needs a port no server there uses`);
    }
    ports.set(t.localPort, name);
  }
  return out;
}

function recipeProblems(at: string, node: NodeConfig, recipe: RecipeConfig): string[] {
  const out: string[] = [];
  if (recipe.vars && Object.hasOwn(recipe.vars, 'recipeDir')) out.push(`${at}.vars.recipeDir: is reserved: {{recipeDir}} is always the recipe's dir`);
  if (recipe.dockerArgs === undefined) return out;
  const known = new Set([...Object.keys(node.vars), ...Object.keys(recipe.vars ?? {}), 'recipeDir']);
  const bad = placeholderProblem(recipe.dockerArgs);
  if (bad) return [...out, `${at}.dockerArgs: ${bad}`];
  const unknown = placeholdersIn(recipe.dockerArgs).find((n) => !known.has(n));
  if (unknown !== undefined) return [...out, `${at}.dockerArgs: unknown {{${unknown}}}; known: ${[...known].join(', ')}`];
  const parsed = parseDockerArgs(fillPlaceholders(recipe.dockerArgs, () => '/pulse-var'));
  if (!parsed.ok) out.push(`${at}.dockerArgs: ${parsed.error}`);
  return out;
}

function firstLocal(nodes: NodesFile['nodes']): string | null {
  return Object.entries(nodes).find(([, n]) => n.host === 'local')?.[0] ?? null;
}

/** Parse and check the text of a nodes.json; `file` names it in every error. */
export function parseNodesConfig(text: string, file: string): NodesConfig {
  const shown = displayPath(file);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new PulseError('config', `${shown}: not valid JSON: ${(e as Error).message}`);
  }
  const res = NodesFileSchema.safeParse(raw);
  const problems = res.success ? ruleProblems(res.data) : res.error.issues.map((i) => `${keyPath(i.path)}: ${issueMessage(i, raw)}`);
  if (!res.success || problems.length > 0) {
    throw new PulseError('config', problems.map((p) => `${shown}: ${p}`).join('\n'));
  }
  const { gatewayNode, $schema: _ignored, ...rest } = res.data;
  return { ...rest, file: shown, gatewayNode: gatewayNode ?? firstLocal(res.data.nodes) };
}

/** Read and check nodes.json; a missing file says how to create it. */
export function loadNodesConfig(file: string): NodesConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new PulseError('config', `${displayPath(file)}: not found`, {
        hint: 'copy runtime/nodes.example.json to runtime/nodes.json and edit it for your nodes (or pass --nodes FILE / PULSE_NODES)',
      });
    }
    throw new PulseError('config', `${displayPath(file)}: cannot read: ${(e as Error).message}`, { cause: e });
  }
  return parseNodesConfig(text, file);
}

/**
 * The node named `name`, or a config error (exit 3 in every command, as the README says) that lists the known
 * nodes and the closest one.
 */
export function nodeOf(cfg: NodesConfig, name: string): NodeConfig {
  const node = Object.hasOwn(cfg.nodes, name) ? cfg.nodes[name] : undefined;
  if (!node) throw new PulseError('config', unknownName('node', name, Object.keys(cfg.nodes)));
  return node;
}

/** How to reach the configured node `name` (a plan's target, and every session status, logs and smoke open). */
export function targetOf(name: string, node: NodeConfig): NodeTarget {
  return node.host === 'ssh' ? { name, host: 'ssh', ssh: node.ssh } : { name, host: 'local' };
}
