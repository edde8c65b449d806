/**
 * runtime/plan/restore.ts, the rollback's checks before use (pure): the grammar a backup's lines must keep (what bash
 * will run when start.sh sources it), the header and integrity check that --force alone passes, the refusals --force
 * never passes, and the plan a restore makes (the same expectations as an up of the backup's profile). Written from the
 * mutation report (bench/mutation.md): before it, no unit test reached this file, so every mutant of it survived.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { loadNodesConfig, type NodesConfig } from '../../runtime/config/nodes.js';
import { envBodySha256, parseEnvHeader } from '../../runtime/config/env-header.js';
import { loadProfiles } from '../../runtime/config/profiles.js';
import { isPulseError } from '../../runtime/errors.js';
import { buildUpPlan, ownBackupPath } from '../../runtime/plan/plan.js';
import { assignmentValues, backupProblem, backupRecipeDir, buildRestorePlan, keyDifference, UNMANAGED_PROFILE, type RestoreOptions } from '../../runtime/plan/restore.js';
import { SECRET_COMMENT_MARK, SECRET_LINE_MARK, SECRET_OTHER_MARK } from '../../runtime/secrets.js';
import { REPO_ROOT } from '../helpers/paths.js';

const NOW = new Date('2026-09-23T10:15:00Z');
const config = loadNodesConfig(path.join(REPO_ROOT, 'test', 'fixtures', 'nodes', 'fleet.json'));
const profiles = new Map([...loadProfiles(path.join(REPO_ROOT, 'runtime', 'qwen38', 'profiles')), ...loadProfiles(path.join(REPO_ROOT, 'test', 'fixtures', 'profiles'))]);
const DIR = '/srv/recipes/flash';
const BACKUP = `${DIR}/.env.pulse-bak-20260922T101500Z`;

/** The .env an up of `profile` on spark2 wrote, i.e. what a backup of it holds. */
function rendered(profile = 'best', node = 'spark2'): string {
  return buildUpPlan(config, profiles, { profile, node, overlay: null, overlayWins: false, yes: false, restart: false }, NOW).env.text;
}

function problemOf(text: string): string {
  const r = assignmentValues(text);
  assert.ok('problem' in r, `accepted: ${JSON.stringify(r)}`);
  return r.problem;
}

function valuesOf(text: string): Record<string, string> {
  const r = assignmentValues(text);
  assert.ok('values' in r, 'problem' in r ? r.problem : '');
  return r.values;
}

function restore(over: Partial<RestoreOptions> = {}, cfg: NodesConfig = config) {
  return buildRestorePlan(cfg, profiles, { node: 'spark2', backup: BACKUP, text: rendered(), yes: false, force: false, ...over }, NOW);
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(isPulseError(e) && e.kind === 'refused', String(e));
    return e.message;
  }
  assert.fail('not refused');
}

test('backup check: an unedited backup of this node and recipe passes; each other header or body is named', () => {
  const text = rendered();
  assert.equal(backupProblem(text, 'spark2', 'qwen38-flash'), null);
  assert.equal(backupProblem(`${text}${SECRET_LINE_MARK}\nHF_TOKEN=hf_x\n`, 'spark2', 'qwen38-flash'), null, 'carried secret lines are outside the hash');
  assert.equal(backupProblem('A=1\n', 'spark2', 'qwen38-flash'), 'it has no pulse header: pulse never wrote it');
  assert.equal(backupProblem(text, 'spark1', 'qwen38-flash'), 'its pulse header names node spark2, not spark1');
  assert.equal(backupProblem(text, 'spark2', 'qwen38-dual'), 'its pulse header names recipe qwen38-flash, but it is in the dir of recipe qwen38-dual');
  const edited = text.replace('MAX_NUM_SEQS="4"', 'MAX_NUM_SEQS="8"');
  const header = parseEnvHeader(text)?.sha256 ?? '';
  assert.equal(backupProblem(edited, 'spark2', 'qwen38-flash'),
    `its lines hash to ${envBodySha256(edited).slice(0, 12)}, its pulse header says ${header.slice(0, 12)}: it was edited after pulse wrote it`);
  assert.notEqual(envBodySha256(edited).slice(0, 12), header.slice(0, 12));
  assert.match(backupProblem(`${text}echo hi\n`, 'spark2', 'qwen38-flash') ?? '', /edited after pulse wrote it/, 'a line added is an edit');
});

test('restore grammar: the values of a rendered backup are the ones its up wrote', () => {
  const up = buildUpPlan(config, profiles, { profile: 'best', node: 'spark2', overlay: null, overlayWins: false, yes: false, restart: false }, NOW);
  assert.deepEqual(valuesOf(up.env.text), up.env.values);
  assert.deepEqual(valuesOf(up.env.text.trimEnd()), up.env.values, 'no final newline');
});

test('restore grammar: blank lines, comments and the node\'s secret markers are skipped; the assignment forms bash reads alike', () => {
  const text = [SECRET_LINE_MARK, SECRET_COMMENT_MARK, '', '   ', '\t# indented comment', '# c', 'export A=1', 'export\tB="two words"',
    "C='x:y'", 'D=', 'E="" # a comment', 'F=w   ', 'g_lower=1', 'H=v\t# tab comment', '_I=@+%,=.-/',
    // bash reads any run of blanks after `export` and before a comment as one
    'export  \tJ=2', 'K=3 \t  # spaced comment'].join('\n');
  assert.deepEqual(valuesOf(`${text}\n`), { A: '1', B: 'two words', C: 'x:y', D: '', E: '', F: 'w', g_lower: '1', H: 'v', _I: '@+%,=.-/', J: '2', K: '3' });
});

test('restore grammar: a line bash would run otherwise is refused by number, never quoted', () => {
  const secret = 'hf_TOPSECRETVALUE';
  const cases: [string, RegExp][] = [
    [`echo ${secret}`, /^line 2 is not a blank line, a comment or a one-line KEY="value": pulse restores nothing else, --force or not$/],
    [`A=${secret} b`, /^line 2 is not a blank line/],
    [`A="${secret}`, /^line 2 is not a blank line/],
    [`A="${secret}"x`, /^line 2 is not a blank line/],
    [`1A=${secret}`, /^line 2 is not a blank line/],
    [`A-B=${secret}`, /^line 2 is not a blank line/],
    [`exportA=1 ${secret}`, /^line 2 is not a blank line/],
    [` A=${secret}`, /^line 2 is not a blank line/],
    [`A=1#${secret}`, /^line 2: A: its value contains "#"; only letters, digits and _ \. \/ : = , @ \+ % - are allowed; pulse never restores it$/],
    [`A=$(id)${secret}`, /^line 2: A: its value contains "\$"/],
    [`A="$(id) ${secret}"`, /^line 2: A: its value contains "\$"; a double-quoted value must not contain/],
    [`A='$(id) ${secret}'`, /^line 2: A: its value contains "\$"; a double-quoted value must not contain/],
    [`A="a;${secret}"`, /^line 2: A: its value contains ";"; start\.sh pastes values unquoted/],
    [SECRET_OTHER_MARK, /^line 2 names a secret \(HF_TOKEN, API_KEY, VLLM_API_KEY\) but is not a line pulse carries \(HF_TOKEN or API_KEY, one plain KEY=value line\): pulse never restores it$/],
    [`HF_TOKEN=${secret}`, /^line 2: HF_TOKEN is a secret key; pulse never restores it$/],
    [`API_KEY=${secret}`, /^line 2: API_KEY is a secret key/],
    [`VLLM_API_KEY=${secret}`, /^line 2: VLLM_API_KEY is a secret key/],
    [`PATH=${secret}`, /^line 2: PATH is a shell variable that changes how bash runs start\.sh; pulse never restores it$/],
    [`export LD_PRELOAD=${secret}`, /^line 2: LD_PRELOAD is a shell variable/],
    [`BASH_FUNC_x=${secret}`, /^line 2: BASH_FUNC_x is a shell variable/],
    [`TP1_CONTAINER_NAME=${secret}`, /^line 2: TP1_CONTAINER_NAME names the container, which belongs to the recipe; pulse never restores it$/],
  ];
  for (const [line, want] of cases) {
    const problem = problemOf(`# ok\n${line}\nB=1\n`);
    assert.match(problem, want, line);
    assert.ok(!problem.includes(secret), `the line's text is never quoted: ${problem}`);
  }
  assert.match(problemOf('A=1\nB=2\n\nC=$x\n'), /^line 4: C:/, 'the number counts every line, blank ones too');
  assert.match(problemOf('A=$x\nB=$y\n'), /^line 1: A:/, 'the first problem');
});

test('restore plan: a backup of best is the plan of an up of best, with the backup\'s own bytes and the restore named', () => {
  const up = buildUpPlan(config, profiles, { profile: 'best', node: 'spark2', overlay: null, overlayWins: false, yes: true, restart: true, protectBackup: BACKUP }, NOW);
  const r = restore({ yes: true, restart: true, protectBackup: BACKUP });
  assert.deepEqual(r.restore, { backup: BACKUP, forced: null });
  for (const k of ['action', 'version', 'node', 'target', 'profile', 'protected', 'confirmed', 'experimental', 'recipe', 'stamp', 'renderedAt',
    'proofs', 'clientNotes', 'expect', 'memory', 'readiness', 'restart', 'fleet', 'backups'] as const) {
    assert.deepEqual(r[k], up[k], k);
  }
  assert.deepEqual(r.env, { ...up.env, identity: up.env.identity }, 'text, identity, path and values');
  assert.deepEqual(r.mounts, up.mounts.filter((m) => m.from === 'profile'), 'the backup\'s own mounts (the node\'s come from nodes.json)');
  assert.equal(r.mounts.length, 2);
  assert.deepEqual([r.mkdirs, r.replacements, r.overlay, r.rollbackHint], [[], [], null, null]);
  assert.equal(restore().backups?.protect, null, 'no protected backup given, none protected');
  assert.equal(restore({ restart: false }).restart, false);
  assert.equal(restore({ yes: false }).confirmed, false);
  assert.equal(restore({ timeoutS: 77 }).readiness.timeoutS, 77);
  const local = restore({ node: 'spark1', text: rendered('best', 'spark1') });
  assert.deepEqual(local.target, { name: 'spark1', host: 'local' });
  const capture = buildUpPlan(config, profiles, { profile: 'capture', node: 'spark2', overlay: null, overlayWins: false, yes: false, restart: false }, NOW);
  assert.ok(capture.clientNotes.length > 0, 'capture has client notes');
  assert.deepEqual(restore({ text: capture.env.text }).clientNotes, capture.clientNotes, 'the notes of the backup\'s profile');
  assert.equal(local.protected, true);
  assert.equal(local.memory.gateGiB, config.minMemAvailableGiB, 'a node without its own gate has the fleet\'s');
});

test('restore plan: what a backup leaves out comes from the node; READY_TIMEOUT_S from the default', () => {
  const text = rendered().split('\n').filter((l) => !/^(PORT|BIND|READY_TIMEOUT_S|SERVED_MODEL_NAME|MAX_MODEL_LEN|EXTRA_DOCKER_ARGS)=/.test(l)).join('\n');
  const r = restore({ text, force: true });
  assert.deepEqual(r.expect, { servedModelName: '', maxModelLen: null, port: 8001, bind: '127.0.0.1' });
  assert.equal(r.readiness.timeoutS, 1800 + config.readyGraceS);
  assert.deepEqual(r.mounts, []);
  const other = restore({ text: rendered().replace('READY_TIMEOUT_S="1800"', 'READY_TIMEOUT_S="60"').replace('PORT="8001"', 'PORT="9001"').replace('BIND="127.0.0.1"', 'BIND="0.0.0.0"'), force: true });
  assert.equal(other.readiness.timeoutS, 60 + config.readyGraceS);
  assert.deepEqual([other.expect.port, other.expect.bind], [9001, '0.0.0.0']);
  assert.match(other.restore?.forced ?? '', /edited after pulse wrote it/);
});

test('restore plan: only a .env or a backup pulse writes in a recipe dir of the node', () => {
  assert.equal(backupRecipeDir(config, 'spark2', BACKUP), DIR);
  assert.equal(backupRecipeDir(config, 'spark2', `${DIR}/.env`), DIR);
  assert.equal(backupRecipeDir(config, 'spark1', '/srv/recipes/dual/.env.pulse-bak-20260922T101500Z-2'), '/srv/recipes/dual');
  assert.equal(restore({ backup: `${DIR}/.env` }).recipe.name, 'qwen38-flash');
  for (const file of [`${DIR}/.env.pulse-bak-2026`, `${DIR}/.env.pulse-bak-20260922T101500Z.sh`, '/srv/recipes/flashy/.env.pulse-bak-20260922T101500Z',
    `${DIR}/../flash/.env`, '/etc/passwd', `${DIR}/sub/.env.pulse-bak-20260922T101500Z`, '/srv/recipes/dual/.env']) {
    assert.equal(refusal(() => restore({ backup: file })), `${file} is not a .env backup pulse writes (.env.pulse-bak-<UTC stamp>) in a recipe dir of spark2`, file);
  }
});

test('backup names: ownBackupPath accepts only pulse\'s stamp in that dir', () => {
  assert.equal(ownBackupPath(DIR, BACKUP), BACKUP);
  assert.equal(ownBackupPath(`${DIR}//`, BACKUP), BACKUP, 'a trailing slash of the dir');
  assert.equal(ownBackupPath(DIR, `${BACKUP}-12`), `${BACKUP}-12`);
  for (const p of [null, undefined, '', `${BACKUP}-`, `${BACKUP}-x`, `${DIR}/x${BACKUP.slice(DIR.length + 1)}`, `${DIR}/.env.pulse-bak-20260922T10150Z`,
    `${DIR}/.env.pulse-bak-2026092aT101500Z`, `${DIR}/.env.pulse-bak-20260922T101500`, `/other${BACKUP}`, `${DIR}x/.env.pulse-bak-20260922T101500Z`]) {
    assert.equal(ownBackupPath(DIR, p), null, String(p));
  }
});

test('restore plan: --force passes an edited or foreign backup, never a line bash would run or a profile pulse never runs', () => {
  const text = rendered();
  const edited = text.replace('MAX_NUM_SEQS="4"', 'MAX_NUM_SEQS="8"');
  assert.equal(refusal(() => restore({ text: edited })),
    `backup ${BACKUP}: ${backupProblem(edited, 'spark2', 'qwen38-flash')}; nothing was stopped (add --force to restore it as it is)`);
  const forced = restore({ text: edited, force: true });
  assert.equal(forced.restore?.forced, backupProblem(edited, 'spark2', 'qwen38-flash'));
  assert.equal(forced.env.identity.sha256, envBodySha256(edited), 'the identity of the bytes as they are, not the header\'s');
  assert.notEqual(forced.env.identity.sha256, parseEnvHeader(edited)?.sha256);
  assert.equal(forced.env.values['MAX_NUM_SEQS'], '8');

  const foreign = text.replace('# pulse-node: spark2', '# pulse-node: spark3');
  assert.match(refusal(() => restore({ text: foreign })), /its pulse header names node spark3, not spark2; nothing was stopped \(add --force/);

  const bare = text.split('\n').filter((l) => !l.startsWith('# pulse-')).join('\n');
  assert.match(refusal(() => restore({ text: bare })), /it has no pulse header/);
  const unmanaged = restore({ text: bare, force: true });
  assert.equal(unmanaged.profile, UNMANAGED_PROFILE);
  assert.deepEqual(unmanaged.env.identity, { sha256: envBodySha256(bare), profile: 'unmanaged', overlay: 'none' });
  assert.deepEqual([unmanaged.proofs, unmanaged.clientNotes], [[], []]);
  assert.equal(unmanaged.restore?.forced, 'it has no pulse header: pulse never wrote it');

  for (const force of [false, true]) {
    assert.equal(refusal(() => restore({ text: `${bare}\nrm -rf /\n`, force })),
      `backup ${BACKUP}: line ${bare.split('\n').length + 1} is not a blank line, a comment or a one-line KEY="value": pulse restores nothing else, --force or not; nothing was stopped`, 'the grammar first, before the header');
    assert.equal(refusal(() => restore({ text: text.replace('# pulse-profile: best', '# pulse-profile: draft'), force })),
      `backup ${BACKUP}: its profile draft is render-only (pulse-runnable: false): pulse never runs it; nothing was stopped`);
  }
  assert.equal(refusal(() => restore({ text: text.replace('EXTRA_DOCKER_ARGS="', 'EXTRA_DOCKER_ARGS="--privileged '), force: true })),
    `backup ${BACKUP}: its EXTRA_DOCKER_ARGS cannot be read: only -e NAME=VALUE and -v SRC:DST[:ro|rw] pairs are allowed, got "--privileged"`);
});

test('restore plan: a recipe no runnable profile uses is never restored, named with its profiles', () => {
  const dual = rendered('best', 'spark1').replace('# pulse-recipe: qwen38-flash', '# pulse-recipe: qwen38-dual').replace('# pulse-profile: best', '# pulse-profile: tp2');
  const backup = '/srv/recipes/dual/.env.pulse-bak-20260922T101500Z';
  assert.equal(refusal(() => restore({ node: 'spark1', backup, text: dual, force: true })),
    `backup ${backup}: its profile tp2 is render-only (pulse-runnable: false): pulse never runs it; nothing was stopped`);
  const bare = dual.split('\n').filter((l) => !l.startsWith('# pulse-')).join('\n');
  assert.equal(refusal(() => restore({ node: 'spark1', backup, text: bare, force: true })),
    `backup ${backup}: recipe qwen38-dual is render-only (its profiles tp2 are): pulse never runs it; nothing was stopped`);
  const tp2 = profiles.get('tp2');
  assert.ok(tp2);
  const two = new Map([...profiles, ['tp2b', { ...tp2, name: 'tp2b' }]]);
  assert.match(refusal(() => buildRestorePlan(config, two, { node: 'spark1', backup, text: bare, yes: false, force: true }, NOW)), /\(its profiles tp2, tp2b are\)/);
  const cfg = JSON.parse(JSON.stringify(config)) as NodesConfig;
  const spark2 = cfg.nodes['spark2'];
  assert.ok(spark2);
  spark2.recipes['lonely'] = { ...spark2.recipes['qwen38-flash']!, dir: '/srv/recipes/lonely' };
  assert.equal(refusal(() => restore({ backup: '/srv/recipes/lonely/.env', text: bare, force: true }, cfg)),
    'backup /srv/recipes/lonely/.env: no profile of pulse runs recipe lonely: pulse never runs it; nothing was stopped');
  assert.equal(restore({ backup: `${DIR}/.env`, text: bare, force: true }, cfg).recipe.name, 'qwen38-flash', 'the dir decides the recipe');
});

test('restore plan: the key difference names each changed key once, secrets masked, a missing side as (unset)', () => {
  const live = 'A=1\nB=2\nHF_TOKEN=hf_live\n';
  assert.deepEqual(keyDifference(live, { A: '1', B: '3', C: '4', API_KEY: 'k' }), ['B: 2 → 3', 'C: (unset) → 4', 'API_KEY: (unset) → <secret>', 'HF_TOKEN: <secret> → (unset)']);
  assert.deepEqual(keyDifference(null, { A: '1' }), ['A: (unset) → 1']);
  assert.deepEqual(keyDifference('A=1\nD=5\n', { A: '1' }), ['D: 5 → (unset)']);
  assert.deepEqual(keyDifference('A=1\n', { A: '1' }), []);
});
