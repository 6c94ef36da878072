import assert from 'node:assert/strict';
import { displayGitUrl, gitUrlRefusal, parseGitUrl } from './git-policy';

const policy = { schemes: ['https', 'ssh'], hosts: ['git.example.com', '*.corp.example'] };

describe('git source policy', () => {
  it('reads scheme and host as git routes them: URLs, scp-like, local paths, remote helpers', () => {
    assert.deepEqual(parseGitUrl('https://Git.Example.com:8443/a.git'), {
      scheme: 'https',
      host: 'git.example.com',
      username: '',
      password: '',
    });
    assert.deepEqual(parseGitUrl('git@git.example.com:ops/a.git'), {
      scheme: 'ssh',
      host: 'git.example.com',
      username: 'git',
      password: '',
    });
    assert.equal(parseGitUrl('/srv/repos/a.git')?.scheme, 'file');
    assert.equal(parseGitUrl('ext::sh -c id')?.scheme, 'ext');
    assert.equal(parseGitUrl('http://[::1]:8200/x')?.host, '::1');
  });

  it('admits listed hosts and suffix patterns, and nothing else', () => {
    assert.equal(gitUrlRefusal('https://git.example.com/a.git', policy), undefined);
    assert.equal(gitUrlRefusal('ssh://git@build.corp.example/a.git', policy), undefined);
    assert.equal(gitUrlRefusal('git@git.example.com:a.git', policy), undefined);
    assert.match(gitUrlRefusal('https://corp.example/a.git', policy)!, /host "corp.example"/);
    assert.match(gitUrlRefusal('https://git.example.com.evil.test/a.git', policy)!, /not in this keeper's allow-list/);
    assert.match(gitUrlRefusal('http://git.example.com/a.git', policy)!, /scheme "http"/);
    assert.match(gitUrlRefusal('file:///etc', policy)!, /scheme "file"/);
    assert.match(gitUrlRefusal('/etc', policy)!, /scheme "file"/);
    assert.match(gitUrlRefusal('ext::sh -c id', { schemes: ['https', 'file'], hosts: ['*'] })!, /scheme "ext"/);
  });

  it('refuses credentials in the URL and credentials over plain http to another host', () => {
    const open = { schemes: ['https', 'http', 'ssh'], hosts: ['*'] };
    assert.match(gitUrlRefusal('https://u:p@git.example.com/a.git', open)!, /credential_ref/);
    assert.match(gitUrlRefusal('https://tok@git.example.com/a.git', open)!, /credential_ref/);
    assert.equal(gitUrlRefusal('https://git.example.com/a.git', open, true), undefined);
    assert.equal(gitUrlRefusal('http://127.0.0.1:8080/a.git', open, true), undefined);
    assert.match(gitUrlRefusal('http://git.example.com/a.git', open, true)!, /plain http/);
    assert.match(
      gitUrlRefusal('ssh://git@git.example.com/a.git', open, true)!,
      /cannot use a credential_ref with the scheme "ssh"/,
    );
  });

  it('shows a URL without its user info', () => {
    assert.equal(displayGitUrl('https://bob:hunter2@git.example.com/a.git'), 'https://git.example.com/a.git');
    assert.equal(displayGitUrl('https://git.example.com/a.git'), 'https://git.example.com/a.git');
    assert.equal(displayGitUrl('git@git.example.com:a.git'), 'git@git.example.com:a.git');
  });
});
