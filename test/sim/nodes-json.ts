/**
 * A nodes.json for the sim nodes, in the format of runtime/nodes.example.json (spec RUNTIME.md "runtime/nodes.json"):
 * host ssh via the sim's ssh aliases, the node keys of the .env, vars, gateway URL, GPU probe and the recipe.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { SimNode } from './node.js';
import { CONTAINER_NAME, PROBE_IMAGE, RECIPE_NAME } from './paths.js';

export interface NodesJsonOptions {
  /** Nodes that get `protected: true` (default: the first node, like spark1). */
  protected?: string[];
  /** `host: local` for these nodes instead of ssh (the local host then runs their scripts). */
  local?: string[];
  minMemAvailableGiB?: number;
  memTimeoutS?: number;
  readyGraceS?: number;
  /** Per-node minMemAvailableGiB overrides. */
  nodeMinMem?: Record<string, number>;
  /** Last word: edit the object before it is written (tests of config rules). */
  transform?: (json: Record<string, unknown>) => Record<string, unknown>;
}

/** The nodes.json object for `nodes`. */
export function nodesJson(nodes: SimNode[], opts: NodesJsonOptions = {}): Record<string, unknown> {
  const prot = opts.protected ?? (nodes[0] ? [nodes[0].name] : []);
  const entries = Object.fromEntries(
    nodes.map((n) => [
      n.name,
      {
        host: opts.local?.includes(n.name) ? 'local' : 'ssh',
        ...(opts.local?.includes(n.name) ? {} : { ssh: n.name }),
        protected: prot.includes(n.name),
        env: { HF_HOME: n.hfHome, BIND: '127.0.0.1', PORT: String(n.vllmPort), REQUIRE_IDLE_GPU: '1' },
        vars: { tritonCache: n.paths.tritonCache, mtpShardR2: n.paths.mtpShardR2 },
        gatewayUrl: `http://127.0.0.1:${n.vllmPort}/v1`,
        gpuProbe: `docker run --rm --gpus all ${PROBE_IMAGE} nvidia-smi -L`,
        ...(opts.nodeMinMem?.[n.name] !== undefined ? { minMemAvailableGiB: opts.nodeMinMem[n.name] } : {}),
        recipes: {
          [RECIPE_NAME]: {
            dir: n.recipeDir,
            start: 'start.sh',
            stop: 'stop.sh',
            container: CONTAINER_NAME,
            dockerArgs: [
              `-v ${n.hfHome}:/root/.cache/huggingface`,
              '-v {{recipeDir}}/mtp.py:/opt/vllm/vllm/model_executor/models/qwen3_next_mtp.py',
            ],
          },
        },
      },
    ]),
  );
  const json: Record<string, unknown> = {
    minMemAvailableGiB: opts.minMemAvailableGiB ?? 100,
    memTimeoutS: opts.memTimeoutS ?? 600,
    readyGraceS: opts.readyGraceS ?? 300,
    nodes: entries,
  };
  return opts.transform ? opts.transform(json) : json;
}

/** Writes nodes.json for `nodes` to `file`. */
export function writeNodesJson(file: string, nodes: SimNode[], opts: NodesJsonOptions = {}): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(nodesJson(nodes, opts), null, 2)}\n`);
}
