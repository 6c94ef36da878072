// The `keeper` command: `init` (first operator), `run` (the server), `check-config`,
// `temporal-setup` (the namespace and search attributes, once per Temporal namespace).
// Exit codes: 0 done, 1 refused or failed (with the reason on stderr), 2 usage.
import yargs from 'yargs';
import { fatalLine } from '../common/journal';
import { createLogger } from '../common/logger';
import { ConfigError, loadConfig } from '../platform/config/load';
import { checkConfigFiles } from './check-config';
import type * as CheckOnline from './check-online';
import { InitRefused, checkAid, keeperInit } from './init';
import { openCore, StartupError } from '../platform/runtime';
import { startKeeper } from './server';
import { VERSION } from '../common/version';
import { temporalSetup } from './temporal-setup';

// Under systemd the reason is one journal line at priority err (common/journal.ts), so
// `journalctl -p warning -u keeper` shows why a start failed.
function fail(err: unknown): never {
  if (err instanceof ConfigError || err instanceof StartupError || err instanceof InitRefused) {
    process.stderr.write(fatalLine(`keeper: ${err.message}`));
  } else {
    process.stderr.write(fatalLine(`keeper: ${(err as Error).message ?? String(err)}`));
  }
  process.exit(1);
}

async function runInit(argv: { archon: string; config: string; 'credential-out': string }): Promise<void> {
  checkAid(argv.archon);
  const config = loadConfig(argv.config);
  const log = createLogger({ level: config.logging.level, base: { kid: config.kid } });
  const core = await openCore(config, log);
  try {
    const { aid, expiresAt } = await keeperInit({
      db: core.db,
      signingKey: core.signingKey,
      issuer: config.auth.jwt.issuer,
      ttlMs: config.auth.jwt.ttl_bootstrap_ms,
      aid: argv.archon,
      credentialOut: argv['credential-out'],
    });
    process.stdout.write(
      `created operator ${aid} (role cluster-admin); credential written to ${argv['credential-out']} (mode 0400), valid until ${expiresAt.toISOString()}\n`,
    );
  } finally {
    await core.close();
  }
}

async function runServer(argv: { config: string }): Promise<void> {
  const config = loadConfig(argv.config);
  const log = createLogger({ level: config.logging.level, base: { kid: config.kid } });
  // Signals are handled from the start: a SIGTERM while components are still starting waits for
  // the start to finish and then stops everything, rather than killing the process half-started.
  let stopping = false;
  const starting = startKeeper(config, log);
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    starting
      .then((keeper) => keeper.stop())
      .then(
        () => process.exit(0),
        (err) => {
          log.error('shutdown failed', { error: err });
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await starting;
}

export function main(args: string[]): void {
  void yargs(args)
    .scriptName('keeper')
    .version(VERSION)
    .command(
      'init',
      'create the first operator (cluster-admin) and write its credential',
      (y) =>
        y
          .option('archon', { type: 'string', demandOption: true, describe: 'the operator id (AID)' })
          .option('config', { type: 'string', demandOption: true, describe: 'path to keeper.yml' })
          .option('credential-out', {
            type: 'string',
            demandOption: true,
            describe: 'file to write the JWT to (mode 0400)',
          }),
      (argv) => runInit(argv).catch(fail),
    )
    .command(
      'run',
      'run the keeper server',
      (y) => y.option('config', { type: 'string', demandOption: true, describe: 'path to keeper.yml' }),
      (argv) => runServer(argv).catch(fail),
    )
    .command(
      'check-config',
      'validate keeper.yml and the files it names (existence, owner-only modes, certificates against their keys), then what a start reaches (secrets store and both AppRoles, PostgreSQL, Redis, Temporal, the kid free) unless --offline; changes nothing',
      (y) =>
        y.option('config', { type: 'string', demandOption: true, describe: 'path to keeper.yml' }).option('offline', {
          type: 'boolean',
          default: false,
          describe: 'check the file and the files it names only',
        }),
      async (argv) => {
        try {
          const config = loadConfig(argv.config);
          const problems = checkConfigFiles(config);
          if (problems.length > 0) throw new ConfigError(argv.config, problems);
          if (!argv.offline) {
            // Loaded here: --offline and a file with problems never load the database and Temporal clients.
            const { checkConfigOnline } = require('./check-online') as typeof CheckOnline;
            const online = await checkConfigOnline(config);
            if (online.length > 0) throw new ConfigError(argv.config, online);
          }
          process.stdout.write(
            `${argv.config}: valid${argv.offline ? ' (offline: the network was not checked)' : ''}\n`,
          );
          process.exit(0);
        } catch (err) {
          fail(err);
        }
      },
    )
    .command(
      'temporal-setup',
      "create the keeper's Temporal namespace if it is missing and register its search attributes (idempotent)",
      (y) =>
        y
          .option('config', { type: 'string', demandOption: true, describe: 'path to keeper.yml' })
          .option('retention-days', {
            type: 'number',
            default: 3,
            describe: 'retention of closed runs in Temporal, for a namespace this command creates',
          }),
      (argv) => temporalSetup(argv.config, argv['retention-days']).catch(fail),
    )
    .demandCommand(1, 'name a command: init, run, check-config or temporal-setup')
    .strict()
    .fail((msg, err) => {
      if (err) fail(err);
      process.stderr.write(`keeper: ${msg}\n(see keeper --help)\n`);
      process.exit(2);
    })
    .help()
    .parse();
}
