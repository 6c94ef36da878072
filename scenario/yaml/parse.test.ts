import * as assert from 'node:assert/strict';
import { parseYaml, type YMap } from './parse';
import { toValue, nodeAtPointer } from './node';
import { ScenarioError } from '../errors';

function fails(src: string): ScenarioError {
  try {
    parseYaml(src, 'f.yml');
  } catch (e) {
    assert.ok(e instanceof ScenarioError);
    return e;
  }
  assert.fail('expected a YAML error');
}

describe('positioned YAML', function () {
  it('gives every node a 1-based line and column', function () {
    const doc = parseYaml('a: 1\nlist:\n  - x\n  - "quoted"\n', 'f.yml')!;
    assert.deepEqual(nodeAtPointer(doc, '/a').pos, { file: 'f.yml', line: 1, col: 4 });
    assert.deepEqual(nodeAtPointer(doc, '/list/1').pos, { file: 'f.yml', line: 4, col: 5 });
    assert.deepEqual(nodeAtPointer(doc, '/list', true).pos, { file: 'f.yml', line: 2, col: 1 });
  });

  it('resolves scalars with the YAML 1.2 core schema and keeps quoted text as strings', function () {
    const doc = parseYaml('i: 42\nf: 1.5\nb: true\nn: ~\ns: "42"\no: 0o17\n', 'f.yml');
    assert.deepEqual(toValue(doc), { i: 42, f: 1.5, b: true, n: null, s: '42', o: 15 });
  });

  it('reports a syntax error at its line and column', function () {
    const e = fails('a: [1,\nb: 2\n');
    assert.equal(e.rule, 'SL001');
    assert.match(e.message, /YAML syntax error/);
    assert.equal(e.pos.file, 'f.yml');
    assert.ok(e.pos.line >= 2);
  });

  it('refuses duplicate keys at the second key', function () {
    const e = fails('a: 1\nb: 2\na: 3\n');
    assert.equal(e.message, 'duplicate key "a"');
    assert.deepEqual([e.pos.line, e.pos.col], [3, 1]);
  });

  it('refuses an anchors bomb before expanding it', function () {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 7; i++)
      lines.push(
        `${'abcdefg'[i]}: &${'abcdefg'[i]} [${Array(10)
          .fill('*' + 'abcdefg'[i - 1])
          .join(', ')}]`,
      );
    const e = fails(lines.join('\n') + '\n');
    assert.match(e.message, /anchors bomb/);
    assert.equal(e.pos.line, 5);
  });

  it('refuses deep nesting', function () {
    const e = fails('x: ' + '['.repeat(200) + ']'.repeat(200) + '\n');
    assert.equal(e.rule, 'SL001');
  });

  it('refuses unknown tags and __proto__ keys', function () {
    assert.match(fails('a: !!js/function x\n').message, /unsupported YAML tag/);
    assert.match(fails('__proto__: 1\n').message, /__proto__/);
  });

  it('keeps aliases as shared nodes within the limit', function () {
    const doc = parseYaml('a: &x {k: v}\nb: *x\n', 'f.yml') as YMap;
    assert.deepEqual(toValue(doc), { a: { k: 'v' }, b: { k: 'v' } });
  });
});
