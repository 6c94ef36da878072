import assert from 'node:assert/strict';
import { APK_RULES } from './apk';
import { APT_RULES } from './apt';
import { DNF_RULES } from './dnf';
import { assertPackageName, assertPackageVersion } from './package-name';

describe('package name validation', () => {
  const allRules = [APT_RULES, DNF_RULES, APK_RULES];

  it('accepts ordinary names on every platform', () => {
    for (const rules of allRules) {
      for (const ok of ['nginx', 'g++', 'libssl3', 'python3.11', 'lib32z1-dev'])
        assert.doesNotThrow(() => assertPackageName(ok, rules));
    }
    assert.doesNotThrow(() => assertPackageName('perl-Data-Dumper', DNF_RULES));
  });

  it('refuses option-like, shell and path names with the reason', () => {
    const cases: Array<[string, RegExp]> = [
      ['foo; rm -rf /', /whitespace/],
      ['foo;rm', /shell metacharacters/],
      ['--config=x', /starts with "-" and would be read as an option/],
      ['-y', /starts with "-"/],
      ['$(reboot)', /shell metacharacters/],
      ['a`id`', /shell metacharacters/],
      ['../../etc/passwd', /path separator/],
      ['foo\nbar', /whitespace or control/],
      ['foo\0', /whitespace or control/],
      ['', /non-empty string/],
    ];
    for (const rules of allRules) {
      for (const [bad, why] of cases)
        assert.throws(() => assertPackageName(bad, rules), why, `${rules.tool} ${JSON.stringify(bad)}`);
    }
  });

  it('applies the Debian policy pattern on apt', () => {
    for (const bad of ['Nginx', 'a', 'foo_bar', 'foo:amd64']) {
      assert.throws(() => assertPackageName(bad, APT_RULES), /is not a valid apt package name/);
    }
  });

  it('validates versions so "name=version" cannot carry an option or a second package', () => {
    assert.doesNotThrow(() => assertPackageVersion('1:2.3.4-1+deb12u1', APT_RULES));
    assert.doesNotThrow(() => assertPackageVersion('1.36.1-r2', APK_RULES));
    assert.throws(() => assertPackageVersion('1.0 other', APT_RULES), /whitespace/);
    assert.throws(() => assertPackageVersion('--force', DNF_RULES), /starts with "-"/);
    assert.throws(() => assertPackageVersion('latest', APT_RULES), /not a valid apt version/);
  });
});
