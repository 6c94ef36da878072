/**
 * YAML with a position on every node. js-yaml 5's event parser gives source
 * offsets for every scalar and collection; we build a small tree from those
 * events so that every later error (schema, expression, template reference)
 * can name `file:line:col`. Scalars are resolved with the YAML 1.2 core schema.
 *
 * Anchors and aliases are allowed but bounded: an alias points at the same
 * node object (no copy), and the size it would add when expanded is counted,
 * so an "anchors bomb" fails here instead of when a value is materialised.
 */
import { parseEvents, getScalarValue, EVENT_ID, SCALAR_STYLE } from 'js-yaml';
import type { Event, ScalarEvent } from 'js-yaml';
import { ScenarioError, type Position } from '../errors';
import { LIMITS } from '../limits';
import { LineIndex } from './line-index';

interface NodeBase {
  pos: Position;
  offset: number;
  size: number;
}
export interface YScalar extends NodeBase {
  kind: 'scalar';
  value: string | number | boolean | null;
  text: string;
  quoted: boolean;
}
export interface YSeq extends NodeBase {
  kind: 'seq';
  items: YNode[];
}
export interface YPair {
  key: YScalar;
  value: YNode;
}
export interface YMap extends NodeBase {
  kind: 'map';
  pairs: YPair[];
}
export type YNode = YScalar | YSeq | YMap;

export const RULE_YAML = 'SL001';

/** Parses one YAML document. Throws ScenarioError (rule SL001) with the position of the problem. */
export function parseYaml(src: string, file: string): YNode | null {
  const lines = new LineIndex(src, file);
  let events: Event[];
  try {
    events = parseEvents(src, { filename: file, maxDepth: LIMITS.maxYamlDepth });
  } catch (e) {
    const mark = (e as { mark?: { line: number; column: number } }).mark;
    const reason = (e as { reason?: string }).reason ?? String(e);
    throw new ScenarioError(
      { file, line: (mark?.line ?? 0) + 1, col: (mark?.column ?? 0) + 1 },
      RULE_YAML,
      `YAML syntax error: ${reason}`,
      'fix the YAML syntax at this position',
    );
  }
  return new TreeBuilder(src, events, lines).document();
}

class TreeBuilder {
  private i = 0;
  private readonly anchors = new Map<string, YNode>();
  private aliases = 0;
  private expanded = 0;

  constructor(
    private readonly src: string,
    private readonly events: Event[],
    private readonly lines: LineIndex,
  ) {}

  document(): YNode | null {
    const docs: Array<YNode | null> = [];
    while (this.i < this.events.length) {
      const ev = this.events[this.i++]!;
      if (ev.type !== EVENT_ID.DOCUMENT) continue;
      docs.push(this.events[this.i]?.type === EVENT_ID.POP ? null : this.node());
      this.i++; // the document's POP
    }
    if (docs.length > 1) {
      throw new ScenarioError(
        this.lines.pos(0),
        RULE_YAML,
        'YAML file holds more than one document',
        'keep one document per file (remove extra `---`)',
      );
    }
    return docs[0] ?? null;
  }

  private node(): YNode {
    const ev = this.events[this.i++]!;
    switch (ev.type) {
      case EVENT_ID.SCALAR:
        return this.anchor(ev, this.scalar(ev));
      case EVENT_ID.SEQUENCE: {
        const seq: YSeq = { kind: 'seq', items: [], ...this.at(ev.start), size: 1 };
        this.checkTag(ev.tagStart, ev.tagEnd, '!!seq', ev.start);
        while (this.events[this.i]!.type !== EVENT_ID.POP) {
          const item = this.node();
          seq.items.push(item);
          seq.size += item.size;
        }
        this.i++;
        return this.anchor(ev, seq);
      }
      case EVENT_ID.MAPPING: {
        const map: YMap = { kind: 'map', pairs: [], ...this.at(ev.start), size: 1 };
        this.checkTag(ev.tagStart, ev.tagEnd, '!!map', ev.start);
        const seen = new Set<string>();
        while (this.events[this.i]!.type !== EVENT_ID.POP) {
          const key = this.node();
          if (key.kind !== 'scalar')
            throw this.error(key.offset, 'a mapping key must be a plain string', 'use a string key');
          const name = String(key.value);
          if (seen.has(name))
            throw this.error(key.offset, `duplicate key "${name}"`, 'remove one of the duplicate keys');
          if (name === '__proto__')
            throw this.error(key.offset, 'the key "__proto__" is not allowed', 'rename the key');
          seen.add(name);
          const value = this.node();
          map.pairs.push({ key, value });
          map.size += 1 + value.size;
        }
        this.i++;
        return this.anchor(ev, map);
      }
      case EVENT_ID.ALIAS: {
        const name = this.src.slice(ev.anchorStart, ev.anchorEnd);
        const target = this.anchors.get(name);
        if (!target) throw this.error(ev.anchorStart, `unknown alias *${name}`, 'define the anchor before using it');
        if (++this.aliases > LIMITS.maxYamlAliases) {
          throw this.error(
            ev.anchorStart,
            `more than ${LIMITS.maxYamlAliases} aliases in one document`,
            'write the values out instead of aliasing them',
          );
        }
        this.expanded += target.size;
        if (this.expanded > LIMITS.maxYamlNodes) {
          throw this.error(
            ev.anchorStart,
            `aliases expand to more than ${LIMITS.maxYamlNodes} nodes (anchors bomb)`,
            'remove the nested aliases',
          );
        }
        return target;
      }
      default:
        throw this.error(0, 'unexpected YAML event', 'fix the YAML structure');
    }
  }

  private scalar(ev: ScalarEvent): YScalar {
    const text = getScalarValue(this.src, ev);
    const quoted = ev.style === SCALAR_STYLE.SINGLE_QUOTED || ev.style === SCALAR_STYLE.DOUBLE_QUOTED;
    // Point at the opening quote for quoted scalars, so columns match what an editor shows.
    const start = quoted ? ev.valueStart - 1 : ev.valueStart;
    const tag = ev.tagStart >= 0 ? this.src.slice(ev.tagStart, ev.tagEnd) : '';
    let value: YScalar['value'];
    if (tag === '!!str' || tag === '!' || (tag === '' && ev.style !== SCALAR_STYLE.PLAIN)) value = text;
    else if (tag === '') value = resolvePlain(text);
    else {
      value = resolvePlain(text);
      const want = (
        { '!!int': 'integer', '!!float': 'number', '!!bool': 'boolean', '!!null': 'null' } as Record<string, string>
      )[tag];
      const got =
        value === null ? 'null' : Number.isInteger(value) && typeof value === 'number' ? 'integer' : typeof value;
      if (!want)
        throw this.error(
          ev.tagStart,
          `unsupported YAML tag ${tag}`,
          'remove the tag; only !!str, !!int, !!float, !!bool and !!null are accepted',
        );
      if (want !== got && !(want === 'number' && got === 'integer'))
        throw this.error(ev.tagStart, `"${text}" is not a valid ${tag}`, 'fix the value or the tag');
    }
    return { kind: 'scalar', value, text, quoted, ...this.at(start), size: 1 };
  }

  private anchor<T extends YNode>(ev: { anchorStart: number; anchorEnd: number }, node: T): T {
    if (ev.anchorStart >= 0) this.anchors.set(this.src.slice(ev.anchorStart, ev.anchorEnd), node);
    return node;
  }

  private checkTag(start: number, end: number, allowed: string, at: number): void {
    if (start < 0) return;
    const tag = this.src.slice(start, end);
    if (tag !== allowed) throw this.error(at, `unsupported YAML tag ${tag}`, 'remove the tag');
  }

  private at(offset: number): { pos: Position; offset: number } {
    return { pos: this.lines.pos(offset), offset };
  }

  private error(offset: number, message: string, fix: string): ScenarioError {
    return new ScenarioError(this.lines.pos(offset), RULE_YAML, message, fix);
  }
}

const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const TRUES = new Set(['true', 'True', 'TRUE']);
const FALSES = new Set(['false', 'False', 'FALSE']);

/** YAML 1.2 core schema resolution of a plain scalar. */
export function resolvePlain(text: string): string | number | boolean | null {
  if (NULLS.has(text)) return null;
  if (TRUES.has(text)) return true;
  if (FALSES.has(text)) return false;
  if (/^[-+]?[0-9]+$/.test(text)) return Number(text);
  if (/^0o[0-7]+$/.test(text)) return parseInt(text.slice(2), 8);
  if (/^0x[0-9a-fA-F]+$/.test(text)) return parseInt(text.slice(2), 16);
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(text)) return Number(text);
  if (/^[-+]?\.(inf|Inf|INF)$/.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^\.(nan|NaN|NAN)$/.test(text)) return NaN;
  return text;
}
