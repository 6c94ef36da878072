// Which certificates of a soul the event stream admits (docs/certificates.md): the live one (the one
// issued last by onboarding, or promoted by a rotation) and, during a rotation, the pending one. The
// pending certificate's first handshake promotes it and retires the previous serial for good.
import type { Knex } from 'knex';

/** Serials as hex without separators or leading zeros, lower case: the PKI's and TLS's notations agree then. */
export function normalSerial(serial: string): string {
  return serial
    .replace(/[^0-9a-fA-F]/g, '')
    .replace(/^0+(?=.)/, '')
    .toLowerCase();
}

/**
 * Records a rotation's certificate as pending, only while `presented` (the certificate of the stream
 * that asked) is still the live one and the soul is not revoked. Returns false otherwise: a
 * re-onboarding, a revocation or another rotation got there first, and the new certificate is not
 * handed out.
 */
export async function recordPending(
  db: Knex,
  sid: string,
  presented: string,
  next: { serial: string; notAfter: Date },
  now = new Date(),
): Promise<boolean> {
  return db.transaction(async (trx) => {
    const row = (await trx('souls').select('status', 'cert_serial').where({ sid }).forUpdate().first()) as
      | { status: string; cert_serial: string | null }
      | undefined;
    if (!row || row.status === 'revoked') return false;
    // A soul onboarded before serials were kept (null) may rotate from whatever it holds.
    if (row.cert_serial !== null && normalSerial(row.cert_serial) !== normalSerial(presented)) return false;
    await trx('souls')
      .where({ sid })
      .update({ cert_serial_pending: next.serial, cert_pending_not_after: next.notAfter, updated_at: now });
    return true;
  });
}

/** The pending certificate connected: it becomes the live one and the previous serial is retired. */
export async function promotePending(db: Knex, sid: string, pendingSerial: string, now = new Date()): Promise<boolean> {
  const n = await db('souls')
    .where({ sid, cert_serial_pending: pendingSerial })
    .whereNot('status', 'revoked')
    .update({
      cert_serial: db.ref('cert_serial_pending'),
      cert_not_after: db.ref('cert_pending_not_after'),
      cert_serial_pending: null,
      cert_pending_not_after: null,
      updated_at: now,
    });
  return n > 0;
}
