/** runtime/nodes.json: every field with a passing and a failing case, error format, defaults, the missing file. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadNodesConfig, parseNodesConfig } from '../../runtime/config/nodes.js';
import { isPulseError } from '../../runtime/errors.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function base(): Json {
  return {
    nodes: {
      n1: {
        host: 'local',
        env: { HF_HOME: '/hf', BIND: '127.0.0.1', PORT: '8000' },
        gatewayUrl: 'http://127.0.0.1:8000/v1',
        recipes: { r: { dir: '/recipes/r', start: 'start.sh', stop: 'stop.sh', container: 'vllm-r' } },
      },
      n2: {
        host: 'ssh',
        ssh: 'spark2',
        env: { HF_HOME: '/hf', BIND: '127.0.0.1', PORT: '8000' },
        gatewayUrl: 'http://10.0.0.2:8000/v1',
        recipes: { r: { dir: '/recipes/r', start: 'start.sh', stop: 'stop.sh', container: 'vllm-r' } },
      },
    },
  };
}

interface Case {
  name: string;
  edit: (j: Json) => void;
  error?: RegExp;
}

const n1 = (j: Json): Json => j['nodes'].n1;
const r1 = (j: Json): Json => n1(j)['recipes'].r;

const cases: Case[] = [
  { name: 'host local', edit: () => {} },
  { name: 'host other', edit: (j) => (n1(j)['host'] = 'docker'), error: /^f\.json: nodes\.n1\.host: expected one of "local", "ssh"$/ },
  { name: 'host missing', edit: (j) => delete n1(j)['host'], error: /^f\.json: nodes\.n1\.host: is required/ },
  { name: 'ssh missing with host ssh', edit: (j) => delete j['nodes'].n2.ssh, error: /^f\.json: nodes\.n2\.ssh: is required when host is "ssh"$/ },
  { name: 'ssh user@host', edit: (j) => (j['nodes'].n2.ssh = 'pulse@spark2.lan') },
  { name: 'ssh with a space', edit: (j) => (j['nodes'].n2.ssh = 'spark2 -oProxyCommand=x'), error: /^f\.json: nodes\.n2\.ssh: expected an ssh alias/ },
  { name: 'ssh with host local', edit: (j) => (n1(j)['ssh'] = 'x'), error: /^f\.json: nodes\.n1\.ssh: must not be set when host is "local"$/ },
  { name: 'protected true', edit: (j) => (n1(j)['protected'] = true) },
  { name: 'protected string', edit: (j) => (n1(j)['protected'] = 'yes'), error: /^f\.json: nodes\.n1\.protected: expected boolean, got string$/ },
  { name: 'env REQUIRE_IDLE_GPU', edit: (j) => (n1(j)['env'].REQUIRE_IDLE_GPU = '1') },
  { name: 'env REQUIRE_IDLE_GPU with a quote', edit: (j) => (n1(j)['env'].REQUIRE_IDLE_GPU = "1'"), error: /^f\.json: nodes\.n1\.env\.REQUIRE_IDLE_GPU: contains a single quote/ },
  { name: 'env HF_HOME empty', edit: (j) => (n1(j)['env'].HF_HOME = ''), error: /^f\.json: nodes\.n1\.env\.HF_HOME: must not be empty$/ },
  { name: 'env PORT as number', edit: (j) => (n1(j)['env'].PORT = 8000), error: /^f\.json: nodes\.n1\.env\.PORT: expected string, got number$/ },
  { name: 'env PORT not a port', edit: (j) => (n1(j)['env'].PORT = '80a'), error: /^f\.json: nodes\.n1\.env\.PORT: expected a port number/ },
  { name: 'env PORT too big', edit: (j) => (n1(j)['env'].PORT = '70000'), error: /^f\.json: nodes\.n1\.env\.PORT: expected a port number of at most 65535$/ },
  { name: 'env HF_HOME relative', edit: (j) => (n1(j)['env'].HF_HOME = 'hf'), error: /^f\.json: nodes\.n1\.env\.HF_HOME: must be an absolute path/ },
  { name: 'env HF_HOME with $', edit: (j) => (n1(j)['env'].HF_HOME = '/home/$USER'), error: /^f\.json: nodes\.n1\.env\.HF_HOME: contains "\$"/ },
  { name: 'env BIND with ;', edit: (j) => (n1(j)['env'].BIND = '0.0.0.0;x'), error: /^f\.json: nodes\.n1\.env\.BIND: contains ";"/ },
  { name: 'env BIND missing', edit: (j) => delete n1(j)['env'].BIND, error: /^f\.json: nodes\.n1\.env\.BIND: is required/ },
  { name: 'env unknown key', edit: (j) => (n1(j)['env'].API_KEY = 'k'), error: /^f\.json: nodes\.n1\.env: unknown key "API_KEY"$/ },
  { name: 'vars', edit: (j) => (n1(j)['vars'] = { tritonCache: '/t', a_b2: 'x.y' }) },
  { name: 'vars value with a backtick', edit: (j) => (n1(j)['vars'] = { a: '/x`id`' }), error: /^f\.json: nodes\.n1\.vars\.a: contains a backtick/ },
  { name: 'vars value with a quote', edit: (j) => (n1(j)['vars'] = { a: '/x"' }), error: /^f\.json: nodes\.n1\.vars\.a: contains a double quote/ },
  { name: 'vars value with a newline', edit: (j) => (n1(j)['vars'] = { a: '/x\n' }), error: /^f\.json: nodes\.n1\.vars\.a: contains a newline/ },
  { name: 'vars value with a backslash', edit: (j) => (n1(j)['vars'] = { a: 'a\\b' }), error: /contains a backslash/ },
  { name: 'vars bad name', edit: (j) => (n1(j)['vars'] = { 'a-b': '/x' }), error: /^f\.json: nodes\.n1\.vars(\.a-b)?: .*var name/ },
  { name: 'vars recipeDir reserved', edit: (j) => (n1(j)['vars'] = { recipeDir: '/x' }), error: /^f\.json: nodes\.n1\.vars\.recipeDir: is reserved/ },
  { name: 'gatewayUrl https', edit: (j) => (n1(j)['gatewayUrl'] = 'https://gw.example/v1') },
  { name: 'gatewayUrl not a URL', edit: (j) => (n1(j)['gatewayUrl'] = 'spark1:8000'), error: /^f\.json: nodes\.n1\.gatewayUrl: expected an http:\/\/ or https:\/\/ URL$/ },
  { name: 'gpuProbe', edit: (j) => (n1(j)['gpuProbe'] = 'docker run --rm --gpus all img nvidia-smi -L') },
  { name: 'gpuProbe with a pipe', edit: (j) => (n1(j)['gpuProbe'] = 'nvidia-smi | head'), error: /^f\.json: nodes\.n1\.gpuProbe: gpuProbe contains "\|"/ },
  { name: 'minMemAvailableGiB on a node', edit: (j) => (n1(j)['minMemAvailableGiB'] = 96) },
  { name: 'minMemAvailableGiB negative', edit: (j) => (n1(j)['minMemAvailableGiB'] = -1), error: /^f\.json: nodes\.n1\.minMemAvailableGiB: / },
  { name: 'node unknown key', edit: (j) => (n1(j)['sshPort'] = 22), error: /^f\.json: nodes\.n1: unknown key "sshPort"$/ },
  { name: 'recipe dockerArgs with {{recipeDir}}', edit: (j) => (r1(j)['dockerArgs'] = '-v {{recipeDir}}/mtp.py:/opt/mtp.py:ro -e A=1') },
  { name: 'recipe dockerArgs bad pair', edit: (j) => (r1(j)['dockerArgs'] = '--privileged'), error: /^f\.json: nodes\.n1\.recipes\.r\.dockerArgs: only -e NAME=VALUE/ },
  { name: 'recipe dockerArgs unknown var', edit: (j) => (r1(j)['dockerArgs'] = '-v {{nope}}:/x'), error: /^f\.json: nodes\.n1\.recipes\.r\.dockerArgs: unknown \{\{nope\}\}/ },
  { name: 'recipe vars', edit: (j) => (r1(j)['vars'] = { tp2Worker: 'spark2' }) },
  { name: 'recipe vars recipeDir', edit: (j) => (r1(j)['vars'] = { recipeDir: '/x' }), error: /recipes\.r\.vars\.recipeDir: is reserved/ },
  { name: 'recipe dir relative', edit: (j) => (r1(j)['dir'] = 'recipes/r'), error: /^f\.json: nodes\.n1\.recipes\.r\.dir: must be an absolute path/ },
  { name: 'recipe start with ;', edit: (j) => (r1(j)['start'] = 'start.sh;id'), error: /^f\.json: nodes\.n1\.recipes\.r\.start: contains ";"/ },
  { name: 'recipe stop missing', edit: (j) => delete r1(j)['stop'], error: /^f\.json: nodes\.n1\.recipes\.r\.stop: is required/ },
  { name: 'recipe container bad', edit: (j) => (r1(j)['container'] = 'a/b'), error: /^f\.json: nodes\.n1\.recipes\.r\.container: container must start/ },
  { name: 'recipe unknown key', edit: (j) => (r1(j)['image'] = 'x'), error: /^f\.json: nodes\.n1\.recipes\.r: unknown key "image"$/ },
  { name: 'top minMemAvailableGiB', edit: (j) => (j['minMemAvailableGiB'] = 96) },
  { name: 'top minMemAvailableGiB zero', edit: (j) => (j['minMemAvailableGiB'] = 0), error: /^f\.json: minMemAvailableGiB: / },
  { name: 'top memTimeoutS', edit: (j) => (j['memTimeoutS'] = 900) },
  { name: 'top memTimeoutS fractional', edit: (j) => (j['memTimeoutS'] = 1.5), error: /^f\.json: memTimeoutS: / },
  { name: 'top readyGraceS', edit: (j) => (j['readyGraceS'] = 0) },
  { name: 'top readyGraceS string', edit: (j) => (j['readyGraceS'] = '300'), error: /^f\.json: readyGraceS: expected number, got string$/ },
  { name: 'gatewayTunnel on an ssh node with a loopback BIND', edit: (j) => (j['nodes'].n2.gatewayTunnel = { localPort: 18002 }) },
  { name: 'gatewayTunnel port 0', edit: (j) => (j['nodes'].n2.gatewayTunnel = { localPort: 0 }), error: /^f\.json: nodes\.n2\.gatewayTunnel\.localPort: / },
  { name: 'gatewayTunnel unknown key', edit: (j) => (j['nodes'].n2.gatewayTunnel = { localPort: 18002, bind: '0.0.0.0' }), error: /^f\.json: nodes\.n2\.gatewayTunnel: unknown key "bind"$/ },
  { name: 'gatewayTunnel with a LAN BIND', edit: (j) => { j['nodes'].n2.env.BIND = '10.0.0.2'; j['nodes'].n2.gatewayTunnel = { localPort: 18002 }; }, error: /^f\.json: nodes\.n2\.gatewayTunnel: needs a loopback BIND/ },
  { name: 'gatewayTunnel on a local node', edit: (j) => (n1(j)['gatewayTunnel'] = { localPort: 18001 }), error: /nodes\.n1\.gatewayTunnel: needs host "ssh"/ },
  { name: 'gatewayTunnel on the gateway node', edit: (j) => { j['gatewayNode'] = 'n2'; j['nodes'].n2.gatewayTunnel = { localPort: 18002 }; }, error: /nodes\.n2\.gatewayTunnel: n2 is the gateway node/ },
  {
    name: 'gatewayTunnel ports shared',
    edit: (j) => {
      j['nodes'].n3 = { ...structuredClone(j['nodes'].n2), gatewayTunnel: { localPort: 18002 } };
      j['nodes'].n2.gatewayTunnel = { localPort: 18002 };
    },
    error: /nodes\.n3\.gatewayTunnel\.localPort: 18002 is also nodes\.n2\.gatewayTunnel\.localPort/,
  },
  {
    name: 'gatewayTunnel port = the local gateway node\'s PORT',
    edit: (j) => (j['nodes'].n2.gatewayTunnel = { localPort: Number(n1(j)['env'].PORT) }),
    error: /^f\.json: nodes\.n2\.gatewayTunnel\.localPort: \d+ is also nodes\.n1\.env\.PORT, the port n1's server listens on on the gateway host; each tunnel needs a port no server there uses$/,
  },
  {
    name: 'gatewayTunnel port = another local node\'s PORT (the gateway host runs it too)',
    edit: (j) => {
      j['nodes'].n3 = { ...structuredClone(n1(j)), env: { ...n1(j)['env'], PORT: '8123' } };
      j['nodes'].n2.gatewayTunnel = { localPort: 8123 };
    },
    error: /nodes\.n2\.gatewayTunnel\.localPort: 8123 is also nodes\.n3\.env\.PORT/,
  },
  { name: 'gatewayTunnel port = the PORT of a node on another host', edit: (j) => (j['nodes'].n2.gatewayTunnel = { localPort: Number(j['nodes'].n2.env.PORT) + 1 }) },
  { name: 'gatewayNode', edit: (j) => (j['gatewayNode'] = 'n2') },
  { name: 'gatewayNode unknown', edit: (j) => (j['gatewayNode'] = 'n9'), error: /^f\.json: gatewayNode: "n9" is not a node; known: n1, n2$/ },
  { name: 'top unknown key', edit: (j) => (j['minMem'] = 1), error: /^f\.json: \(top level\): unknown key "minMem"$/ },
  { name: 'no nodes', edit: (j) => (j['nodes'] = {}), error: /^f\.json: nodes: must hold at least one node$/ },
  { name: 'bad node name', edit: (j) => (j['nodes']['-x'] = n1(j)), error: /^f\.json: nodes(\.-x)?: .*node name/ },
];

for (const c of cases) {
  test(`nodes.json: ${c.name} ${c.error ? 'fails' : 'passes'}`, () => {
    const j = base();
    c.edit(j);
    const text = JSON.stringify(j);
    if (!c.error) {
      parseNodesConfig(text, 'f.json');
      return;
    }
    assert.throws(
      () => parseNodesConfig(text, 'f.json'),
      (e: unknown) => isPulseError(e) && e.kind === 'config' && c.error!.test(e.message),
    );
  });
}

test('nodes.json: defaults 100 GiB, 600 s, 300 s; protected false; gateway node = first local node', () => {
  const cfg = parseNodesConfig(JSON.stringify(base()), 'f.json');
  assert.equal(cfg.minMemAvailableGiB, 100);
  assert.equal(cfg.memTimeoutS, 600);
  assert.equal(cfg.readyGraceS, 300);
  assert.equal(cfg.nodes['n1']?.protected, false);
  assert.deepEqual(cfg.nodes['n1']?.vars, {});
  assert.equal(cfg.gatewayNode, 'n1');
  assert.equal(cfg.file, 'f.json');
});

test('nodes.json: no local node and no gatewayNode gives no gateway node', () => {
  const j = base();
  delete j['nodes'].n1;
  assert.equal(parseNodesConfig(JSON.stringify(j), 'f.json').gatewayNode, null);
});

test('nodes.json: several problems are all reported, one per line', () => {
  const j = base();
  n1(j)['host'] = 'x';
  n1(j)['env'].PORT = 'x';
  assert.throws(
    () => parseNodesConfig(JSON.stringify(j), 'f.json'),
    (e: unknown) => isPulseError(e) && e.message.split('\n').length === 2 && e.message.split('\n').every((l) => l.startsWith('f.json: nodes.n1.')),
  );
});

test('nodes.json: invalid JSON names the file', () => {
  assert.throws(() => parseNodesConfig('{', 'f.json'), (e: unknown) => isPulseError(e) && /^f\.json: not valid JSON/.test(e.message));
});

test('nodes.json: a missing file says to copy runtime/nodes.example.json', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-nodes-'));
  try {
    assert.throws(
      () => loadNodesConfig(path.join(dir, 'nodes.json')),
      (e: unknown) => isPulseError(e) && e.kind === 'config' && /not found/.test(e.message) && /copy runtime\/nodes\.example\.json/.test(e.hint ?? ''),
    );
    writeFileSync(path.join(dir, 'nodes.json'), JSON.stringify(base()));
    assert.equal(Object.keys(loadNodesConfig(path.join(dir, 'nodes.json')).nodes).length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
