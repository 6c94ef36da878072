import type { Position } from '../errors';

/** Maps a source offset to a 1-based line and column (UTF-16 code units, as editors count in practice). */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(
    src: string,
    readonly file: string,
  ) {
    for (let i = 0; i < src.length; i++) if (src.charCodeAt(i) === 10) this.starts.push(i + 1);
  }

  pos(offset: number): Position {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { file: this.file, line: lo + 1, col: offset - this.starts[lo]! + 1 };
  }
}
