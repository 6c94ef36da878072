import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { ConfigError, loadConfig } from './load';

function valid(): Record<string, any> {
  return {
    kid: 'keeper-1',
    listen: {
      openapi: { addr: '127.0.0.1:8080' },
      metrics: { addr: '127.0.0.1:9090' },
      grpc: {
        bootstrap: { addr: '127.0.0.1:9442', tls: { cert: 'tls/keeper.crt', key: 'tls/keeper.key' } },
        event_stream: {
          addr: '127.0.0.1:9443',
          tls: { cert: 'tls/keeper.crt', key: 'tls/keeper.key', ca: 'tls/ca.pem' },
        },
      },
    },
    database: { dsn_ref: 'secretstore:secret/keeper' },
    cache: { addr: '127.0.0.1:6379', password_ref: 'secretstore:secret/keeper' },
    secretstore: {
      addr: 'http://127.0.0.1:8200',
      auth: { method: 'approle', role_id: 'keeper', secret_id_file: 'secret-id' },
      scenario_auth: { method: 'approle', role_id: 'keeper-scenario', secret_id_file: 'scenario-secret-id' },
      pki_mount: 'pki',
      pki_role: 'soul',
    },
    auth: {
      jwt: {
        signing_key_ref: 'secretstore:secret/keeper',
        issuer: 'keeper',
        ttl_default: '24h',
        ttl_bootstrap: '720h',
      },
    },
  };
}

// Every config file of this suite lives under one temp dir, removed when the suite ends.
let root: string | undefined;
after(() => {
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

function write(doc: unknown): string {
  root ??= fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-config-'));
  const dir = fs.mkdtempSync(path.join(root, 'c-'));
  const file = path.join(dir, 'keeper.yml');
  fs.writeFileSync(file, typeof doc === 'string' ? doc : yaml.dump(doc));
  return file;
}

function problems(doc: unknown): string[] {
  try {
    loadConfig(write(doc));
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail('the configuration was accepted');
}

describe('keeper configuration', () => {
  it('accepts the spec keys, fills defaults, and resolves paths against the file', () => {
    const file = write(valid());
    const c = loadConfig(file);
    assert.equal(c.auth.jwt.ttl_default_ms, 24 * 3600_000);
    assert.equal(c.auth.jwt.ttl_bootstrap_ms, 720 * 3600_000);
    assert.equal(c.auth.bootstrap_token_ttl_ms, 24 * 3600_000);
    assert.equal(c.listen.grpc.event_stream.tls.ca, path.join(path.dirname(file), 'tls/ca.pem'));
    assert.equal(c.secretstore.auth?.secret_id_file, path.join(path.dirname(file), 'secret-id'));
    assert.equal(c.temporal.address, '127.0.0.1:7233');
    assert.equal(c.listen.mcp, undefined, 'MCP is off when its block is absent');
  });

  it('names a missing key', () => {
    const doc = valid();
    delete doc.database;
    assert.deepEqual(problems(doc), ['database: is required']);
  });

  it('names a nested missing key', () => {
    const doc = valid();
    delete doc.auth.jwt.issuer;
    assert.deepEqual(problems(doc), ['auth.jwt.issuer: is required']);
  });

  it('names a bad duration and the accepted form', () => {
    const doc = valid();
    doc.auth.jwt.ttl_default = '24 hours';
    assert.deepEqual(problems(doc), ['auth.jwt.ttl_default: must be duration such as 30s, 15m, 24h']);
  });

  it('names a reference that is not secretstore:<path>', () => {
    const doc = valid();
    doc.database.dsn_ref = 'postgres://user:pw@db/keeper';
    assert.deepEqual(problems(doc), ['database.dsn_ref: must be secretstore:<path>']);
  });

  it('accepts an empty cache password_ref (a cache with no password)', () => {
    const doc = valid();
    doc.cache.password_ref = '';
    assert.equal(loadConfig(write(doc)).cache.password_ref, '');
  });

  it('refuses unknown keys so a typo does not pass silently', () => {
    const doc = valid();
    doc.listen.openap = { addr: '127.0.0.1:1' };
    assert.deepEqual(problems(doc), [
      'listen.openap: is not a known key (check the spelling; see docs/configuration.md)',
    ]);
  });

  it('reports every problem at once', () => {
    const doc = valid();
    delete doc.kid;
    doc.cache.addr = 'localhost';
    assert.deepEqual(problems(doc).sort(), ['cache.addr: must be <host>:<port>', 'kid: is required']);
  });

  it('requires a secret_id source for AppRole', () => {
    const doc = valid();
    delete doc.secretstore.auth.secret_id_file;
    assert.match(problems(doc)[0]!, /^secretstore\.auth\.secret_id_file: is required/);
  });

  it('refuses a keeper without a scenario role, or whose scenario role could reach its own secrets (issue 28)', () => {
    const doc = valid();
    delete doc.secretstore.scenario_auth;
    assert.deepEqual(problems(doc), [
      'secretstore.scenario_auth: is required: the AppRole (role_id, secret_id_file or secret_id_env) whose policy reads only below ' +
        "secretstore.scenario_prefix; scenario secrets and credential_refs are never read with the keeper's own token (docs/secrets.md)",
    ]);
    const same = valid();
    same.secretstore.scenario_auth.role_id = 'keeper';
    assert.match(
      problems(same)[0]!,
      /^secretstore\.scenario_auth\.role_id: must name a role other than secretstore\.auth\.role_id \("keeper"\)/,
    );
    const noSecretId = valid();
    delete noSecretId.secretstore.scenario_auth.secret_id_file;
    assert.match(problems(noSecretId)[0]!, /^secretstore\.scenario_auth\.secret_id_file: is required/);
    // The keeper's own secrets below the scenario prefix: the scenario role could read them.
    const nested = valid();
    nested.secretstore.scenario_prefix = 'secret/';
    assert.deepEqual(
      problems(nested).map((p) => p.split(':')[0]),
      ['database.dsn_ref', 'cache.password_ref', 'auth.jwt.signing_key_ref'],
    );
    assert.match(problems(nested)[0]!, /must not lie below secretstore\.scenario_prefix \(secret\/\)/);
    const file = write(valid());
    assert.deepEqual(loadConfig(file).secretstore.scenario_auth, {
      method: 'approle',
      role_id: 'keeper-scenario',
      secret_id_file: path.join(path.dirname(file), 'scenario-secret-id'),
    });
  });

  it('names the file in the message, and says when it cannot be read or parsed', () => {
    const file = write('kid: [unclosed');
    assert.throws(
      () => loadConfig(file),
      (err: Error) => err.message.includes(file) && /not valid YAML/.test(err.message),
    );
    assert.throws(() => loadConfig('/nonexistent/keeper.yml'), /cannot read the file \(ENOENT\)/);
  });

  it('reads temporal.tls with paths against the file, and no TLS when the block is absent', () => {
    assert.equal(loadConfig(write(valid())).temporal.tls, undefined);
    const file = write({
      ...valid(),
      temporal: {
        address: 'temporal.internal:7233',
        tls: { ca: 'tls/temporal-ca.pem', cert: '/etc/keeper/t.crt', key: 't.key', server_name: 'temporal.internal' },
      },
    });
    assert.deepEqual(loadConfig(file).temporal.tls, {
      ca: path.join(path.dirname(file), 'tls/temporal-ca.pem'),
      cert: '/etc/keeper/t.crt',
      key: path.join(path.dirname(file), 't.key'),
      server_name: 'temporal.internal',
    });
    assert.deepEqual(problems({ ...valid(), temporal: { tls: { ca: 'ca.pem', cert: 'c.crt' } } }), [
      'temporal.tls.key: is required',
    ]);
  });

  it('defaults the git source policy to https and ssh on no host, and checks its keys', () => {
    const c = loadConfig(write(valid()));
    assert.deepEqual(c.services.git, {
      schemes: ['https', 'ssh'],
      hosts: [],
      maxRepoBytes: 256 * 1024 * 1024,
      timeoutMs: 120_000,
      fileShared: false,
    });
    const open = loadConfig(
      write({
        ...valid(),
        services: {
          git: {
            schemes: ['https', 'file'],
            hosts: ['git.example.com', '*.corp.example'],
            max_repo_bytes: 1048576,
            timeout: '30s',
            file_shared: true,
          },
        },
      }),
    );
    assert.deepEqual(open.services.git, {
      schemes: ['https', 'file'],
      hosts: ['git.example.com', '*.corp.example'],
      maxRepoBytes: 1048576,
      timeoutMs: 30_000,
      fileShared: true,
    });
    assert.deepEqual(problems({ ...valid(), services: { git: { schemes: ['ext'] } } }), [
      'services.git.schemes.0: must be one of https, http, ssh, git, file',
    ]);
    assert.deepEqual(problems({ ...valid(), services: { git: { hosts: ['evil host'] } } }), [
      'services.git.hosts.0: must be a host name, *.<domain>, an IP address, or * for any host',
    ]);
  });

  it('defaults hub.accept_rate for 2 cores and refuses a rate that is not positive', () => {
    assert.deepEqual(loadConfig(write(valid())).hub.accept_rate, { per_second: 200, burst: 400 });
    assert.deepEqual(
      loadConfig(write({ ...valid(), hub: { accept_rate: { per_second: 2.5, burst: 5 } } })).hub.accept_rate,
      { per_second: 2.5, burst: 5 },
    );
    assert.deepEqual(problems({ ...valid(), hub: { accept_rate: { per_second: 0 } } }), [
      'hub.accept_rate.per_second: must be > 0',
    ]);
    assert.deepEqual(problems({ ...valid(), hub: { accept_rate: { burst: 0 } } }), [
      'hub.accept_rate.burst: must be >= 1',
    ]);
  });

  it('defaults the execution limits as documented and refuses an unknown role, a module outside the core library, a limit below 1', () => {
    assert.deepEqual(loadConfig(write(valid())).executions, {
      confirm_above: 10,
      per_operator: 4,
      modules: {},
      secret_prefixes: {},
    });
    const tuned = {
      confirm_above: 50,
      per_operator: 2,
      modules: { responder: ['core.service.restarted', 'core.cmd.run'] },
      secret_prefixes: { responder: ['secret/keeper/services/web/'] },
    };
    assert.deepEqual(loadConfig(write({ ...valid(), executions: tuned })).executions, tuned);
    assert.deepEqual(problems({ ...valid(), executions: { modules: { oncall: ['core.cmd.run'] } } }), [
      'executions.modules.oncall: must be one of cluster-admin, operator, viewer, responder',
    ]);
    const [bad] = problems({ ...valid(), executions: { modules: { responder: ['core.cmd.rn'] } } });
    assert.match(bad!, /^executions\.modules\.responder\.0: must be one of \*, (core\.[a-z.]+, )*core\.cmd\.run, /);
    assert.deepEqual(problems({ ...valid(), executions: { per_operator: 0, confirm_above: -1 } }), [
      'executions.confirm_above: must be >= 0',
      'executions.per_operator: must be >= 1',
    ]);
  });

  it('takes executions.secret_prefixes per role below secretstore.scenario_prefix only', () => {
    assert.deepEqual(problems({ ...valid(), executions: { secret_prefixes: { responder: ['secret/keeper/own/'] } } }), [
      'executions.secret_prefixes.responder: "secret/keeper/own/" must lie below secretstore.scenario_prefix (secret/keeper/services/), the only secrets the keeper reads for executions',
    ]);
    assert.deepEqual(
      problems({ ...valid(), executions: { secret_prefixes: { oncall: ['secret/keeper/services/'] } } }),
      ['executions.secret_prefixes.oncall: must be one of cluster-admin, operator, viewer, responder'],
    );
    const [bad] = problems({ ...valid(), executions: { secret_prefixes: { responder: ['secret//x'] } } });
    assert.match(bad!, /^executions\.secret_prefixes\.responder\.0: /);
  });
});
