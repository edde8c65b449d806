/**
 * A nodes.json for the sim nodes, in the format of runtime/nodes.example.json (runtime/config/nodes-schema.ts):
 * host ssh via the sim's ssh aliases, the node keys of the .env, vars, gateway URL, GPU probe and the recipes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { SimNode } from './node.js';
import { CONTAINER_NAME, PROBE_IMAGE, RECIPE_NAME } from './paths.js';

export interface NodesJsonOptions {
  /** Nodes that get `protected: true` (default: the first node, like spark1). */
  protected?: string[];
  /** `host: local` for these nodes instead of ssh (the local host then runs their scripts, outside the sim). */
  local?: string[];
  /** The node that runs the gateway (default: the first node); a loopback BIND is reachable only from it. */
  gatewayNode?: string | null;
  minMemAvailableGiB?: number;
  memTimeoutS?: number;
  readyGraceS?: number;
  /** Per-node minMemAvailableGiB overrides. */
  nodeMinMem?: Record<string, number>;
  /** Last word: edit the object before it is written (tests of config rules). */
  transform?: (json: Record<string, unknown>) => Record<string, unknown>;
}

function recipeEntry(dir: string, container: string, hfHome: string, vars?: Record<string, string>): Record<string, unknown> {
  return {
    dir,
    start: 'start.sh',
    stop: 'stop.sh',
    container,
    dockerArgs: `-v ${hfHome}:/root/.cache/huggingface -v {{recipeDir}}/mtp.py:/opt/vllm/vllm/model_executor/models/qwen3_next_mtp.py:ro`,
    ...(vars ? { vars } : {}),
  };
}

/**
 * The URL the gateway uses: the gateway node reaches its own server on 127.0.0.1; any other node by its "LAN"
 * address, which in the sim is its ssh address (127.0.0.2x). A server on BIND=127.0.0.1 is then unreachable from
 * the gateway, as on spark2, and BIND=<node address> is reachable but breaks start.sh's localhost check.
 */
function gatewayUrl(n: SimNode, gatewayNode: string | null | undefined): string {
  return `http://${n.name === gatewayNode ? '127.0.0.1' : n.address}:${n.vllmPort}/v1`;
}

function nodeEntry(n: SimNode, i: number, all: SimNode[], opts: NodesJsonOptions): Record<string, unknown> {
  const local = opts.local?.includes(n.name) ?? false;
  const prot = opts.protected ?? (all[0] ? [all[0].name] : []);
  const recipes: Record<string, unknown> = { [RECIPE_NAME]: recipeEntry(n.recipeDir, CONTAINER_NAME, n.hfHome) };
  if (i === 0 && all[1]) recipes['qwen38-dual'] = recipeEntry(n.paths.dualRecipeDir, 'vllm-qwen38-tp2', n.hfHome, { tp2Worker: all[1].name });
  return {
    host: local ? 'local' : 'ssh',
    ...(local ? {} : { ssh: n.name }),
    protected: prot.includes(n.name),
    env: { HF_HOME: n.hfHome, BIND: '127.0.0.1', PORT: String(n.vllmPort), REQUIRE_IDLE_GPU: '1' },
    vars: { tritonCache: n.paths.tritonCache, mtpShardR2: n.paths.mtpShardR2, captureDir: n.paths.captureDir },
    gatewayUrl: gatewayUrl(n, opts.gatewayNode === undefined ? all[0]?.name : opts.gatewayNode),
    gpuProbe: `docker run --rm --gpus all ${PROBE_IMAGE} nvidia-smi -L`,
    ...(opts.nodeMinMem?.[n.name] !== undefined ? { minMemAvailableGiB: opts.nodeMinMem[n.name] } : {}),
    recipes,
  };
}

/** The nodes.json object for `nodes`. */
export function nodesJson(nodes: SimNode[], opts: NodesJsonOptions = {}): Record<string, unknown> {
  const gatewayNode = opts.gatewayNode === undefined ? nodes[0]?.name : opts.gatewayNode;
  const json: Record<string, unknown> = {
    ...(gatewayNode ? { gatewayNode } : {}),
    minMemAvailableGiB: opts.minMemAvailableGiB ?? 100,
    memTimeoutS: opts.memTimeoutS ?? 600,
    readyGraceS: opts.readyGraceS ?? 300,
    nodes: Object.fromEntries(nodes.map((n, i) => [n.name, nodeEntry(n, i, nodes, opts)])),
  };
  return opts.transform ? opts.transform(json) : json;
}

/** Writes nodes.json for `nodes` to `file`. */
export function writeNodesJson(file: string, nodes: SimNode[], opts: NodesJsonOptions = {}): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(nodesJson(nodes, opts), null, 2)}\n`);
}
