import assert from 'node:assert/strict';
import { collectSoulprint, osFamily, parseOsRelease, sameSoulprint, type FactSources } from './facts';
import { VERSION as SOUL_VERSION } from '../common/version';

const sources = (over: Partial<FactSources> = {}): FactSources => ({
  hostname: () => 'soul-a.keeper.test',
  osRelease: () => 'NAME="Debian GNU/Linux"\nID=debian\nVERSION_ID="12"\n',
  kernelRelease: () => '6.1.0',
  machine: () => 'x86_64',
  cpuCount: () => 2,
  totalMemory: () => 4096,
  interfaces: () => ({
    lo: [{ address: '127.0.0.1', internal: true } as any],
    eth0: [{ address: '10.0.0.5', internal: false } as any, { address: 'fe80::1', internal: false } as any],
  }),
  ...over,
});

describe('agent/facts', () => {
  it('builds the soulprint from the host sources', () => {
    assert.deepEqual(collectSoulprint('soul-a.keeper.test', sources()), {
      fqdn: 'soul-a.keeper.test',
      hostname: 'soul-a.keeper.test',
      os_family: 'debian',
      os_name: 'Debian GNU/Linux',
      os_release: '12',
      architecture: 'x86_64',
      cpu_count: 2,
      memory_bytes: 4096,
      addresses: ['10.0.0.5', 'fe80::1'],
      soul_version: SOUL_VERSION,
    });
  });

  it('maps distributions to their family', () => {
    assert.equal(osFamily(parseOsRelease('ID=ubuntu\nID_LIKE=debian')), 'debian');
    assert.equal(osFamily(parseOsRelease('ID="rocky"\nID_LIKE="rhel centos fedora"')), 'rhel');
    assert.equal(osFamily(parseOsRelease('ID=fedora')), 'fedora');
    assert.equal(osFamily(parseOsRelease('ID=alpine')), 'alpine');
  });

  it('falls back to the kernel release without /etc/os-release', () => {
    const sp = collectSoulprint('a.keeper.test', sources({ osRelease: () => undefined }));
    assert.equal(sp.os_release, '6.1.0');
  });

  it('sees any change as a change', () => {
    const a = collectSoulprint('a.keeper.test', sources());
    assert.ok(sameSoulprint(a, collectSoulprint('a.keeper.test', sources())));
    assert.ok(!sameSoulprint(a, collectSoulprint('a.keeper.test', sources({ totalMemory: () => 8192 }))));
  });
});
