// The id of a run or a plan (= its Temporal workflow id): `<incarnation>.<operation>.<time>-<random>`,
// readable, unique, and safe as a ledger file name on the souls.
import { randomBytes } from 'node:crypto';

export function newApplyId(incarnation: string, operation: string): string {
  return `${incarnation}.${operation}.${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}
