/**
 * Render's record of the secrets a scenario was given (issue 28). Each `secretstore(...)` call and
 * each secret input render evaluated is checked against the policy when it is made and recorded
 * here under a token of fresh random bytes; the marker CEL and templates see holds only that token.
 * After render, a marker is resolved through this record alone, so the only secrets a plan can
 * carry are those the scenario read with literal, checked paths: a marker built from text names a
 * token that is not here (or a path nowhere), and is refused.
 */
import { randomBytes } from 'node:crypto';
import type { SecretRef } from '../../common/secret';
import { tokenMarker } from './markers';

export class SecretRecord {
  private readonly byToken = new Map<string, SecretRef>();
  private readonly byRef = new Map<string, string>();

  /** The marker of `ref`, already checked by the caller; one token per secret per render. */
  issue(ref: SecretRef): string {
    const key = `${ref.path}#${ref.field}`;
    let token = this.byRef.get(key);
    if (!token) {
      token = randomBytes(16).toString('hex');
      this.byRef.set(key, token);
      this.byToken.set(token, { path: ref.path, field: ref.field });
    }
    return tokenMarker(token);
  }

  /** The secret a token was issued for, or undefined (forged, or another render's). */
  get(token: string): SecretRef | undefined {
    return this.byToken.get(token);
  }

  /** Whether `text` holds one of this record's tokens anywhere (case-insensitively: a transformed marker). */
  mentions(text: string): boolean {
    const t = text.toLowerCase();
    for (const token of this.byToken.keys()) if (t.includes(token)) return true;
    return false;
  }
}
