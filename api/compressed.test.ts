// Which encoding a request gets: the client's Accept-Encoding with its q-values decides.
import assert from 'node:assert/strict';
import { chooseEncoding } from './compressed';

describe('api/compressed chooseEncoding', () => {
  it('prefers Brotli, then gzip, honours q=0 and *, and sends as is when nothing is accepted', () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'identity'],
      ['', 'identity'],
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['gzip;q=1, br;q=0.5', 'gzip'],
      ['*', 'br'],
      ['*;q=0', 'identity'],
      ['identity', 'identity'],
      ['deflate', 'identity'],
      ['GZIP', 'gzip'],
    ];
    for (const [header, expected] of cases) assert.equal(chooseEncoding(header), expected, String(header));
  });
});
