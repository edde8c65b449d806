/**
 * `pulse completion zsh` in a real zsh (Debian's zsh; scripts/setup.sh installs it): an interactive zsh on a
 * pseudo-terminal (zsh's own zpty module) loads the script the two ways its header says, after compinit or from
 * $fpath, then <TAB> is pressed on a command line. What the completion system would offer is captured at zsh's
 * compadd (the matches it was given), one line per <TAB>. So this goes through compinit, bashcompinit's
 * `complete`, _bash_complete and the generated function, as a user's shell does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';

const cli = path.join(REPO_ROOT, 'bin/pulse-cli');
const fleet = path.join(REPO_ROOT, 'test/fixtures/nodes/fleet.json');
const zsh = spawnSync('zsh', ['--version'], { encoding: 'utf8' }).status === 0;

/**
 * The inner, interactive zsh: compinit, the script (sourced, or from $fpath), and <TAB> bound to a completion widget
 * that records each compadd's matches (adding none, so the line stays as typed) and writes `<done>` when the
 * completion has ended: each TAB gives one line `<hit>a<hit>b...<done>` (`<done>` alone: nothing offered).
 */
function innerRc(dir: string, mode: 'source' | 'fpath', hits: string): string {
  const load = mode === 'source'
    ? `autoload -U compinit && compinit -u -D\nsource ${dir}/_pulse`
    : `fpath=(${dir} $fpath)\nautoload -U compinit && compinit -u -D`;
  return `PS1='' PROMPT='' RPROMPT=''
${load}
exec 3>>${hits}
compadd() {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "$@"; return; fi
  local -a __hits
  builtin compadd -A __hits "$@"
  (( $#__hits )) && print -rn -- "<hit>\${(j:<hit>:)__hits}" >&3
  return 1
}
_probe_done() { print -r -- '<done>' >&3 }
_probe() { comppostfuncs=(_probe_done); _main_complete }
zle -C probe-complete complete-word _probe
bindkey '^I' probe-complete
`;
}

/**
 * Types each line in the inner zsh and presses <TAB>, waiting for that completion's `<done>` (no fixed sleep);
 * returns the matches offered for each line, sorted.
 */
function tabs(mode: 'source' | 'fpath', lines: string[]): string[][] {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pulse-zsh-'));
  try {
    const r0 = spawnSync(process.execPath, [cli, 'completion', 'zsh'], { encoding: 'utf8' });
    assert.equal(r0.status, 0, r0.stderr);
    writeFileSync(path.join(dir, '_pulse'), r0.stdout);
    mkdirSync(path.join(dir, 'bin'));
    symlinkSync(cli, path.join(dir, 'bin', 'pulse'));
    const hits = path.join(dir, 'hits');
    writeFileSync(hits, '');
    writeFileSync(path.join(dir, 'rc.zsh'), innerRc(dir, mode, hits));
    const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
    const steps = lines.map((l, i) => `zpty -w -n z ${q(l)}$'\\t'
for ((t = 0; t < 600; t++)); do (( $(grep -c '<done>' ${hits}) > ${i} )) && break; sleep 0.05; done
zpty -w -n z $'\\C-u'`).join('\n');
    const driver = `zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z ${q(`PATH=${dir}/bin:$PATH; source ${dir}/rc.zsh`)}
${steps}
zpty -d z
`;
    const r = spawnSync('zsh', ['-f', '-c', driver], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, PULSE_PROFILES_DIR: '' } });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    const out = readFileSync(hits, 'utf8').split('\n').filter((l) => l !== '');
    assert.equal(out.length, lines.length, `one completion per <TAB>, got:\n${out.join('\n')}`);
    return out.map((l) => l.replace(/<done>$/, '').split('<hit>').filter((h) => h !== '').sort());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const CASES: [string, string[]][] = [
  ['pulse mo', ['model']],
  ['pulse model u', ['up']],
  ['pulse model up ', ['best', 'capture', 'datagen', 'tp2']],
  ['pulse model up best --no', ['--no-drain', '--node', '--nodes']],
  [`pulse --nodes ${fleet} model up best --node `, ['spark1', 'spark2', 'spark3']],
  [`pulse --nodes ${fleet} model cancel --node spark2 --w`, ['--wait']],
  ['pulse completion ', ['bash', 'zsh']],
];

test('zsh, the script sourced after compinit: commands, options, profile names and node names', { skip: !zsh && 'no zsh here (scripts/setup.sh installs it)' }, () => {
  const got = tabs('source', CASES.map(([l]) => l));
  assert.deepEqual(got, CASES.map(([, want]) => want));
});

test('zsh, the script in $fpath (compinit autoloads it): the very first <TAB> completes too', { skip: !zsh && 'no zsh here (scripts/setup.sh installs it)' }, () => {
  const got = tabs('fpath', ['pulse model u', 'pulse model up ']);
  assert.deepEqual(got, [['up'], ['best', 'capture', 'datagen', 'tp2']]);
});
