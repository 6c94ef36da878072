import type { Position } from '../errors';
import type { YScalar } from '../yaml/parse';

/**
 * Position of a character inside a scalar's text. Exact for plain and
 * quoted one-line scalars; for block scalars the line is exact and the
 * column counts from the block's indentation.
 */
export function posInScalar(node: YScalar, offset: number): Position {
  const before = node.text.slice(0, offset);
  const nl = before.lastIndexOf('\n');
  if (nl < 0) return { file: node.pos.file, line: node.pos.line, col: node.pos.col + (node.quoted ? 1 : 0) + offset };
  const lines = before.split('\n').length - 1;
  return { file: node.pos.file, line: node.pos.line + lines, col: node.pos.col + (offset - nl - 1) };
}
