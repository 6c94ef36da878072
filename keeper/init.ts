// `keeper init`: creates the first operator (interface spec 4.4). Under a database advisory lock it
// checks the registry is empty, inserts the cluster-admin, signs its JWT and writes it mode 0400.
// Nothing is half-done: the credential is written to a temp file before the commit and renamed
// after it, so a failure leaves neither an operator nor a file.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { issueOperatorToken } from '../api/jwt';
import { AID_PATTERN, CLUSTER_ADMIN } from '../api/roles';
import { createArchon } from '../db/repos/archons';

export class InitRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InitRefused';
  }
}

const INIT_LOCK = 0x696e6974; // "init"

export interface InitOptions {
  db: Knex;
  signingKey: Uint8Array;
  issuer: string;
  ttlMs: number;
  aid: string;
  credentialOut: string;
}

export function checkAid(aid: string): void {
  if (!AID_PATTERN.test(aid)) {
    throw new InitRefused(
      `--archon "${aid}" is not a valid operator id: it must match ${AID_PATTERN.source} ` +
        '(start with a letter or digit, then a-z, 0-9 and ._@-, 2 to 128 characters in all)',
    );
  }
}

export async function keeperInit(opts: InitOptions): Promise<{ aid: string; expiresAt: Date }> {
  checkAid(opts.aid);
  const out = path.resolve(opts.credentialOut);
  if (fs.existsSync(out))
    throw new InitRefused(`--credential-out ${out} already exists; keeper init never overwrites a credential`);
  if (!fs.existsSync(path.dirname(out)))
    throw new InitRefused(`the folder of --credential-out (${path.dirname(out)}) does not exist`);
  const tmp = path.join(path.dirname(out), `.${path.basename(out)}.${randomBytes(6).toString('hex')}.tmp`);
  let committed = false;
  try {
    const result = await opts.db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(?)', [INIT_LOCK]);
      const [{ count }] = await trx('archons').count<{ count: string }[]>({ count: '*' });
      if (Number(count) > 0) {
        throw new InitRefused(
          `the operator registry is not empty (${count} operator${count === '1' ? '' : 's'}); ` +
            'keeper init runs once per cluster. An existing cluster-admin can issue a token with POST /v1/archons/{aid}/tokens',
        );
      }
      await createArchon(trx, { aid: opts.aid, role: CLUSTER_ADMIN, createdBy: 'keeper init' });
      const { token, expiresAt } = await issueOperatorToken(
        opts.signingKey,
        opts.issuer,
        opts.aid,
        CLUSTER_ADMIN,
        opts.ttlMs,
      );
      const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o400);
      try {
        fs.writeSync(fd, token + '\n');
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      return { aid: opts.aid, expiresAt };
    });
    committed = true;
    fs.renameSync(tmp, out);
    return result;
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    if (committed)
      throw new Error(
        `the operator was created but the credential could not be moved to ${out}: ${(err as Error).message}`,
      );
    throw err;
  }
}
