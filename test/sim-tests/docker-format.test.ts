import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderTemplate, TemplateError } from '../sim/docker-format.js';

const rec = { Name: '/vllm', State: { Running: true, Pid: 42, StartedAt: '2026-12-02T09:20:05.123456789Z' }, Mounts: [{ Source: '/a', Destination: '/b' }, { Source: '/c', Destination: '/d' }], Config: { Env: ['A=1'] } };

test('fields, json, string literals and range render like Go templates', () => {
  assert.equal(renderTemplate('{{.State.Running}} {{.State.Pid}}', rec), 'true 42');
  assert.equal(renderTemplate('{{json .Config.Env}}', rec), '["A=1"]');
  assert.equal(renderTemplate('{{.Name}}{{"\\t"}}{{.State.StartedAt}}', rec), '/vllm\t2026-12-02T09:20:05.123456789Z');
  assert.equal(renderTemplate('{{range .Mounts}}{{.Source}}:{{.Destination}} {{end}}', rec), '/a:/b /c:/d ');
  assert.equal(renderTemplate('{{.Config.Env}}', rec), '[A=1]');
});

test('a literal \\t is a tab only for the table formatters (ps, images), as in the docker CLI', () => {
  assert.equal(renderTemplate('{{.Name}}\\t{{.State.Pid}}', rec), '/vllm\\t42');
  assert.equal(renderTemplate('{{.Name}}\\t{{.State.Pid}}', rec, true), '/vllm\t42');
});

test('unknown fields and functions fail instead of printing something plausible', () => {
  assert.throws(() => renderTemplate('{{.State.Nope}}', rec), TemplateError);
  assert.throws(() => renderTemplate('{{index .Config.Env 0}}', rec), TemplateError);
});
