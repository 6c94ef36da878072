// Log lines reach the journal at their own priority (issue 37 row 7): under systemd ($JOURNAL_STREAM
// names the stream on stderr) each line starts with its syslog priority prefix, which the journal
// turns into the entry's priority, so `journalctl -p warning -u keeper` shows warnings, errors and
// the reason a start failed, as one line. Anywhere else (a terminal, a file) the lines stay plain.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { repoRoot } from '../support/repo';

/** Runs `args` with stderr on a file; `journal` sets $JOURNAL_STREAM to that file, as systemd does for its stream. */
async function stderrOf(args: string[], journal: boolean, dir: string): Promise<{ code: number | null; err: string }> {
  const file = path.join(dir, `stderr-${Math.random().toString(36).slice(2)}`);
  const fd = fs.openSync(file, 'w');
  const st = fs.fstatSync(fd);
  const env = { ...process.env, JOURNAL_STREAM: journal ? `${st.dev}:${st.ino}` : `${st.dev}:${st.ino + 1}` };
  const p = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', fd], env });
  fs.closeSync(fd);
  const code = await new Promise<number | null>((r) => p.on('close', r));
  return { code, err: fs.readFileSync(file, 'utf8') };
}

describe('log priority in the journal', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'journal-'));
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const logEachLevel = [
    '-e',
    `const { createLogger } = require(${JSON.stringify(path.join(repoRoot(), 'dist', 'common', 'logger.js'))});
    const log = createLogger({ level: 'debug', base: { kid: 'k1' } });
    log.debug('d'); log.info('i'); log.warn('w', { error: new Error('two\\nlines') }); log.error('e');`,
  ];

  it('on the journal stream, each log line starts with its priority: debug 7, info 6, warn 4, error 3; one JSON line per event', async () => {
    const { code, err } = await stderrOf(logEachLevel, true, dir);
    assert.equal(code, 0, err);
    const lines = err.trimEnd().split('\n');
    assert.deepEqual(
      lines.map((l) => l.slice(0, 3)),
      ['<7>', '<6>', '<4>', '<3>'],
    );
    assert.deepEqual(
      lines.map((l) => JSON.parse(l.slice(3)).level),
      ['debug', 'info', 'warn', 'error'],
    );
    assert.equal(
      JSON.parse(lines[2]!.slice(3)).error,
      'two\nlines',
      'a multi-line error stays inside its one JSON line',
    );
  });

  it('elsewhere (a terminal, a file, a stream that is not the journal) the lines are plain JSON', async () => {
    const { err } = await stderrOf(logEachLevel, false, dir);
    assert.deepEqual(
      err
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).msg),
      ['d', 'i', 'w', 'e'],
    );
  });

  it('a keeper that cannot start says why in one line at priority err; the same reason stays readable in a terminal', async () => {
    // An invalid configuration: its problems are a list, several lines in a terminal.
    const file = path.join(dir, 'keeper.yml');
    fs.writeFileSync(file, yaml.dump({ kid: 'Bad Kid', listen: {} }));
    const keeper = path.join(repoRoot(), 'bin', 'keeper');
    const onJournal = await stderrOf([keeper, 'run', `--config=${file}`], true, dir);
    assert.equal(onJournal.code, 1);
    const lines = onJournal.err.trimEnd().split('\n');
    assert.equal(lines.length, 1, onJournal.err);
    assert.match(
      lines[0]!,
      new RegExp(
        `^<3>keeper: invalid configuration ${file.replace(/[.]/g, '\\.')}: - database: is required - .* - kid: .* - listen\\.openapi: is required`,
      ),
    );

    const plain = await stderrOf([keeper, 'run', `--config=${file}`], false, dir);
    assert.equal(plain.code, 1);
    assert.match(
      plain.err,
      new RegExp(`^keeper: invalid configuration ${file.replace(/[.]/g, '\\.')}:\\n  - database: is required\\n  - `),
    );
  });

  it('a soul that cannot start says why (and the fix) in one line at priority err', async () => {
    const file = path.join(dir, 'soul.yml');
    fs.writeFileSync(
      file,
      yaml.dump({
        sid: 'web-1.example.com',
        keeper: {
          endpoints: [{ host: 'keeper.example.com', bootstrap_port: 9442, event_stream_port: 9443, priority: 10 }],
          tls: { ca: 'missing-ca.pem' },
        },
        paths: { seed: path.join(dir, 'seed'), modules: path.join(dir, 'modules') },
      }),
    );
    const r = await stderrOf([path.join(repoRoot(), 'bin', 'soul'), 'run', `--config=${file}`], true, dir);
    assert.notEqual(r.code, 0);
    const lines = r.err
      .trimEnd()
      .split('\n')
      .filter((l) => !l.startsWith('<6>') && !l.startsWith('<7>'));
    assert.equal(lines.length, 1, r.err);
    assert.match(lines[0]!, /^<3>soul: /);
  });
});
