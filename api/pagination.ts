// List cursors: the last key of the previous page, base64url-encoded behind a version tag so the
// format can change without old cursors being misread. A cursor that does not decode to a key of
// the right shape is a 400, never a database query with junk in it.
import { problems } from './problems';
import type { Page } from '../db/repos/page';

const VERSION = 'k1:';

export function encodeCursor(key: string): string {
  return Buffer.from(VERSION + key, 'utf8').toString('base64url');
}

/** The key inside `cursor`, or undefined for no cursor; throws a 400 problem for a malformed one. */
export function decodeCursor(cursor: string | undefined, keyPattern: RegExp): string | undefined {
  if (cursor === undefined) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const key = text.startsWith(VERSION) ? text.slice(VERSION.length) : '';
  if (!keyPattern.test(key)) {
    throw problems.invalid('the cursor is not one this keeper issued; start again without a cursor', [
      { path: '/query/cursor', message: 'is not a valid cursor' },
    ]);
  }
  return key;
}

/** The `{items, next_cursor}` body of every list. */
export function pageBody<T, U>(page: Page<T>, view: (item: T) => U): { items: U[]; next_cursor: string | null } {
  return { items: page.items.map(view), next_cursor: page.next === undefined ? null : encodeCursor(page.next) };
}
