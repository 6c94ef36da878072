// The keeper refuses every certificate that is not exactly a soul certificate for the SID: made here
// with the openssl CLI under a throwaway CA, one per way a PKI role can be wrong.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkSoulCertificate } from './issued-check';

const SID = 'web-1.keeper.test';
const DAY = 86_400_000;

describe('hub/issued-check', () => {
  let dir: string;
  const issue = (name: string, subject: string, ext: string, days = 30): string => {
    const key = path.join(dir, `${name}.key`);
    const csr = path.join(dir, `${name}.csr`);
    const crt = path.join(dir, `${name}.crt`);
    const extFile = path.join(dir, `${name}.ext`);
    fs.writeFileSync(extFile, ext);
    execFileSync('openssl', [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-subj',
      subject,
      '-out',
      csr,
    ]);
    execFileSync('openssl', [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      path.join(dir, 'ca.crt'),
      '-CAkey',
      path.join(dir, 'ca.key'),
      '-CAcreateserial',
      '-days',
      String(days),
      '-extfile',
      extFile,
      '-out',
      crt,
    ]);
    return fs.readFileSync(crt, 'utf8');
  };
  const soulExt = `subjectAltName=DNS:${SID}\nextendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n`;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'issued-check-'));
    execFileSync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=Test Root',
      '-days',
      '2',
      '-keyout',
      path.join(dir, 'ca.key'),
      '-out',
      path.join(dir, 'ca.crt'),
    ]);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('accepts a soul certificate: CN and the only SAN the SID, client auth only, not a CA, within the lifetime', () => {
    const r = checkSoulCertificate(issue('good', `/CN=${SID}`, soulExt), SID, 30 * DAY);
    assert.equal(r.ok, true);
  });

  it('refuses a certificate for another name (a role that honours the CSR)', () => {
    const r = checkSoulCertificate(
      issue('other', '/CN=db-1.keeper.test', 'subjectAltName=DNS:db-1.keeper.test\nextendedKeyUsage=clientAuth\n'),
      SID,
      30 * DAY,
    );
    assert.deepEqual(r, {
      ok: false,
      problem: `the subject is "CN=db-1.keeper.test", not CN=${SID} alone (does the role use the CSR's names?)`,
    });
  });

  it('refuses a second SAN, a server certificate, a CA and a lifetime beyond the role', () => {
    const extra = checkSoulCertificate(
      issue('extra', `/CN=${SID}`, `subjectAltName=DNS:${SID},DNS:db-1.keeper.test\nextendedKeyUsage=clientAuth\n`),
      SID,
      30 * DAY,
    );
    assert.equal(extra.ok, false);
    assert.match((extra as { problem: string }).problem, /not DNS:web-1.keeper.test alone/);
    const server = checkSoulCertificate(
      issue('server', `/CN=${SID}`, `subjectAltName=DNS:${SID}\nextendedKeyUsage=serverAuth,clientAuth\n`),
      SID,
      30 * DAY,
    );
    assert.match((server as { problem: string }).problem, /not client authentication only/);
    const ca = checkSoulCertificate(
      issue('is-ca', `/CN=${SID}`, `${soulExt.replace('CA:FALSE', 'critical,CA:TRUE')}`),
      SID,
      30 * DAY,
    );
    assert.deepEqual(ca, { ok: false, problem: 'the certificate is a CA certificate' });
    const long = checkSoulCertificate(issue('long', `/CN=${SID}`, soulExt, 365), SID, 30 * DAY);
    assert.match((long as { problem: string }).problem, /longer than the 2592000 s a soul certificate may live/);
  });

  it('refuses what is not a certificate at all', () => {
    assert.equal(checkSoulCertificate('not a certificate', SID, DAY).ok, false);
  });
});
