/** runtime/nodes.schema.json is generated from the zod schema; this keeps the committed file in sync. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseNodesConfig } from '../../runtime/config/nodes.js';
import { nodesSchemaText } from '../../runtime/config/write-schema.js';
import { REPO_ROOT } from '../helpers/paths.js';

test('runtime/nodes.schema.json matches the zod schema (regenerate: node dist/runtime/config/write-schema.js)', () => {
  const committed = readFileSync(path.join(REPO_ROOT, 'runtime/nodes.schema.json'), 'utf8');
  assert.equal(committed, nodesSchemaText());
});

test('the JSON Schema is strict and names every node field of the spec', () => {
  const schema = JSON.parse(nodesSchemaText()) as { additionalProperties: boolean; properties: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.equal(schema.additionalProperties, false);
  const node = schema.properties['nodes'].additionalProperties;
  assert.equal(node.additionalProperties, false);
  for (const f of ['host', 'ssh', 'protected', 'env', 'vars', 'gatewayUrl', 'gpuProbe', 'minMemAvailableGiB', 'recipes']) {
    assert.ok(f in node.properties, f);
  }
  assert.deepEqual(Object.keys(node.properties.env.properties), ['HF_HOME', 'BIND', 'PORT', 'REQUIRE_IDLE_GPU']);
  const recipe = node.properties.recipes.additionalProperties;
  assert.deepEqual(Object.keys(recipe.properties), ['dir', 'start', 'stop', 'container', 'dockerArgs', 'vars']);
  for (const f of ['minMemAvailableGiB', 'memTimeoutS', 'readyGraceS', 'gatewayNode']) assert.ok(f in schema.properties, f);
});

test('runtime/nodes.example.json is valid: spark1 local, protected, the gateway; spark2 ssh on 127.0.0.1', () => {
  const file = path.join(REPO_ROOT, 'runtime/nodes.example.json');
  const cfg = parseNodesConfig(readFileSync(file, 'utf8'), file);
  assert.equal(cfg.nodes['spark1']?.host, 'local');
  assert.equal(cfg.nodes['spark1']?.protected, true);
  assert.equal(cfg.gatewayNode, 'spark1');
  assert.equal(cfg.nodes['spark2']?.host, 'ssh');
  assert.equal(cfg.nodes['spark2']?.env.BIND, '127.0.0.1');
  assert.ok(cfg.nodes['spark1']?.recipes['qwen38-flash'] && cfg.nodes['spark1']?.recipes['qwen38-dual']);
  assert.ok(cfg.nodes['spark2']?.vars['tritonCache'] && cfg.nodes['spark2']?.vars['mtpShardR2']);
});
