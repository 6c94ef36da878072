import assert from 'node:assert/strict';
import { peerIdentity } from './peer-identity';

const cert = (over: Record<string, unknown> = {}) =>
  ({
    raw: Buffer.from('x'),
    subject: { CN: 'Soul-A.keeper.test' },
    subjectaltname: 'DNS:Soul-A.keeper.test',
    ext_key_usage: ['1.3.6.1.5.5.7.3.2'],
    serialNumber: '0A',
    valid_from: 'Nov 24 07:00:00 2026 GMT',
    valid_to: 'Dec 24 07:00:00 2026 GMT',
    ...over,
  }) as any;

describe('hub/peer-identity', () => {
  it('takes the SID from the verified certificate CN', () => {
    assert.deepEqual(peerIdentity({ transportSecurityType: 'ssl', sslPeerCertificate: cert() }), {
      ok: true,
      sid: 'soul-a.keeper.test',
      serial: '0A',
      notBefore: Date.parse('2026-11-24T07:00:00Z'),
      notAfter: Date.parse('2026-12-24T07:00:00Z'),
    });
  });

  it('refuses without a verified certificate', () => {
    assert.equal(peerIdentity(null).ok, false);
    assert.equal(peerIdentity({}).ok, false);
    assert.equal(peerIdentity({ transportSecurityType: 'ssl' }).ok, false);
  });

  it('refuses a server certificate (no clientAuth) and a CN that is not its SAN', () => {
    assert.deepEqual(
      peerIdentity({
        transportSecurityType: 'ssl',
        sslPeerCertificate: cert({ ext_key_usage: ['1.3.6.1.5.5.7.3.1'] }),
      }),
      { ok: false, reason: 'the client certificate is not for client authentication' },
    );
    assert.equal(
      peerIdentity({
        transportSecurityType: 'ssl',
        sslPeerCertificate: cert({ subjectaltname: 'DNS:other.keeper.test' }),
      }).ok,
      false,
    );
  });
});
