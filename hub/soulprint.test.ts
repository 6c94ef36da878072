import assert from 'node:assert/strict';
import type { Soulprint } from '../proto/types';
import { SOULPRINT_LIMITS, checkSoulprint } from './soulprint';

const SID = 'web1.keeper.test';
const good = (over: Partial<Soulprint> = {}): Soulprint => ({
  fqdn: SID,
  hostname: 'web1',
  os_family: 'debian',
  os_name: 'Debian GNU/Linux',
  os_release: '12',
  architecture: 'x86_64',
  cpu_count: 2,
  memory_bytes: 4_000_000_000,
  addresses: ['10.0.0.5', 'fe80::1'],
  soul_version: '0.1.0',
  ...over,
});

describe('hub/soulprint', () => {
  it('keeps a real soulprint, with only the known fields', () => {
    const v = checkSoulprint({ ...good(), extra: 'x' } as Soulprint, SID);
    assert.ok(v.ok);
    assert.deepEqual(v.soulprint, good());
  });

  it('refuses a soulprint naming another host than the certificate (the SID is authoritative)', () => {
    assert.deepEqual(checkSoulprint(good({ fqdn: 'db1.keeper.test' }), SID), {
      ok: false,
      field: 'fqdn',
      reason: `names host "db1.keeper.test" but the certificate is for ${SID}`,
    });
    assert.deepEqual(checkSoulprint(null, SID), { ok: false, field: 'soulprint', reason: 'is required' });
  });

  it('refuses 2 MiB of facts before reading them, in any field', () => {
    const big = 'a'.repeat(2 * 1024 * 1024);
    for (const over of [
      { os_name: big },
      { hostname: big },
      { addresses: Array(80_000).fill('10.0.0.1') },
      { fqdn: big },
    ] as Partial<Soulprint>[]) {
      const v = checkSoulprint(good(over), SID);
      assert.equal(v.ok, false);
      assert.equal(!v.ok && v.field, 'soulprint');
      assert.match(!v.ok ? v.reason : '', new RegExp(`at most ${SOULPRINT_LIMITS.encodedBytes} bytes`));
    }
  });

  it('names the field and the rule of each bad fact', () => {
    const cases: [Partial<Soulprint>, string, RegExp][] = [
      [{ hostname: '<script>alert(1)</script>' }, 'hostname', /DNS name/],
      [{ hostname: '-web' }, 'hostname', /DNS name/],
      [{ os_name: 'Debian\u001b[31m' }, 'os_name', /printable/],
      [{ os_release: '12\n' }, 'os_release', /printable/],
      [{ architecture: 'x'.repeat(129) }, 'architecture', /at most 128 characters/],
      [{ soul_version: 'v\u202e1' }, 'soul_version', /printable/],
      [{ cpu_count: -1 }, 'cpu_count', /integer/],
      [{ cpu_count: 1.5 }, 'cpu_count', /integer/],
      [{ memory_bytes: Number.MAX_VALUE }, 'memory_bytes', /integer/],
      [{ addresses: ['10.0.0.5', 'not-an-ip'] }, 'addresses[1]', /IPv4 or IPv6/],
      [{ addresses: ['10.0.0.300'] }, 'addresses[0]', /IPv4 or IPv6/],
      [{ addresses: Array(257).fill('::1') }, 'addresses', /at most 256/],
    ];
    for (const [over, field, rule] of cases) {
      const v = checkSoulprint(good(over), SID);
      assert.equal(v.ok, false, JSON.stringify(over).slice(0, 80));
      assert.equal(!v.ok && v.field, field);
      assert.match(!v.ok ? v.reason : '', rule);
    }
  });

  it('accepts non-ASCII letters in free text (an OS name in another script)', () => {
    assert.ok(checkSoulprint(good({ os_name: 'Astra Linux «Смоленск»' }), SID).ok);
  });
});
