// core.sysctl.set { name, value, file? }: a kernel parameter has a value now and at every boot
// (Ansible's sysctl, Salt's sysctl.present). Live: /proc/sys/<name with / for .>, written as
// `sysctl -w` does and read back (the kernel may refuse or clamp a value: the step fails, saying so).
// Persisted: the line `name = value` in /etc/sysctl.d/<file>.conf (default 99-keeper), which
// systemd-sysctl applies at boot; only that line changes, the rest of the file is kept. Values are
// compared with runs of whitespace as one space ("4096 87380 6291456" equals the kernel's tabs).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ensureParents, writeAtomic } from './atomic-write';
import { readTarget, type FileSnapshot } from './file-target';
import { ParamError, optionalString, readParams, requireString } from './params';
import { defineState, type Change } from './shape';
import { bare, joinLines, NEW_FILE_MODE, splitLines, type Edit } from './text-edit';
import type { StateDeps, StateModule } from './types';
import { unifiedDiff } from './unified-diff';

const NAME = /^[a-z0-9_]+(\.[A-Za-z0-9_:-]+)+$/;
const FILE = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
export const SYSCTL_DIR = '/etc/sysctl.d';
export const DEFAULT_SYSCTL_FILE = '99-keeper';

export interface SysctlSet {
  name: string;
  value: string;
  conf: string;
  proc: string;
}

/** Whitespace runs as one space, trimmed: how two values of a parameter compare. */
export const normalizeSysctl = (v: string): string => v.trim().split(/\s+/).join(' ');

export function parseSysctlSet(raw: unknown, procRoot = '/proc/sys'): SysctlSet {
  const p = readParams(raw, ['name', 'value', 'file']);
  const name = requireString(p, 'name');
  if (!NAME.test(name))
    throw new ParamError(
      `param "name" must be a dotted kernel parameter such as net.ipv4.ip_forward, got ${JSON.stringify(name)}`,
    );
  const v = p.value;
  if (typeof v !== 'string' && !(typeof v === 'number' && Number.isInteger(v)))
    throw new ParamError('param "value" is required and must be a string or an integer');
  const value = normalizeSysctl(String(v));
  if (value === '' || /[\n\r]/.test(String(v))) throw new ParamError('param "value" must be one non-empty line');
  const file = optionalString(p, 'file') ?? DEFAULT_SYSCTL_FILE;
  if (!FILE.test(file))
    throw new ParamError(
      `param "file" must be a file name without ".conf" or a folder, such as 60-app, got ${JSON.stringify(file)}`,
    );
  return { name, value, conf: path.join(SYSCTL_DIR, `${file}.conf`), proc: path.join(procRoot, ...name.split('.')) };
}

/** The sysctl.d text with `name = value`: lines naming the parameter (dotted or slashed, `-` prefixed)
 *  get the value; none: the line is appended. Null when every such line has it. */
export function editSysctlConf(name: string, value: string, text: string): Edit | null {
  const t = splitLines(text);
  const hits: number[] = [];
  for (const [i, raw] of t.lines.entries()) {
    const l = bare(raw).trim();
    if (l === '' || l.startsWith('#') || l.startsWith(';')) continue;
    const eq = l.indexOf('=');
    if (eq < 0) continue;
    const key = l.slice(0, eq).trim().replace(/^-/, '').split('/').join('.');
    if (key === name) hits.push(i);
  }
  if (hits.length > 0) {
    const stale = hits.filter((i) => {
      const l = bare(t.lines[i]!);
      return normalizeSysctl(l.slice(l.indexOf('=') + 1)) !== value;
    });
    if (stale.length === 0) return null;
    for (const i of stale) {
      const l = bare(t.lines[i]!);
      t.lines[i] = `${l.slice(0, l.indexOf('=')).trimEnd()} = ${value}`;
    }
    return {
      after: joinLines(t),
      what: `line${stale.length > 1 ? 's' : ''} ${stale.map((i) => i + 1).join(', ')} changed`,
    };
  }
  t.lines.push(`${name} = ${value}`);
  t.eol = true;
  return { after: joinLines(t), what: 'line added' };
}

interface Current {
  live: string;
  file: FileSnapshot;
  conf: Edit | null;
}

async function readLive(p: SysctlSet): Promise<string> {
  try {
    return normalizeSysctl(await fs.readFile(p.proc, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new Error(
        `this kernel has no parameter ${p.name} (${p.proc} does not exist); check param "name" (sysctl -a lists them)`,
      );
    throw err;
  }
}

export function createSysctlSet(_deps: StateDeps, procRoot = '/proc/sys'): StateModule {
  return defineState<SysctlSet, Current>({
    name: 'core.sysctl.set',
    parse: (raw) => parseSysctlSet(raw, procRoot),
    async read(p) {
      const live = await readLive(p);
      const file = await readTarget(p.conf);
      const text = file.content?.toString('utf8') ?? '';
      return { live, file, conf: editSysctlConf(p.name, p.value, text) };
    },
    diff(p, { live, file, conf }, ctx): Change | null {
      const parts: string[] = [];
      const diff: Record<string, unknown> = { name: p.name };
      if (live !== p.value) {
        parts.push(`live ${live}->${p.value}`);
        diff.live = { from: live, to: p.value };
      }
      if (conf) {
        parts.push(`${p.conf} ${file.exists ? `updated, ${conf.what}` : 'created'}`);
        const before = file.content?.toString('utf8') ?? '';
        diff.file = {
          path: p.conf,
          ...(file.exists ? {} : { created: true }),
          edit: conf.what,
          // A kernel parameter is no secret, but the keeper still decides what a plan shows.
          ...(ctx.dryRun && ctx.showContent === true ? { unified: unifiedDiff(before, conf.after, p.conf) } : {}),
        };
      }
      if (parts.length === 0) return null;
      return { summary: `set ${p.name} to ${p.value} (${parts.join(', ')})`, diff };
    },
    describe: (p) => `${p.name} is ${p.value}, live and in ${p.conf}`,
    async apply(p, { live, file, conf }, change) {
      // Live first: a value the kernel refuses is not persisted for the next boot to fail on.
      if (live !== p.value) {
        try {
          await fs.writeFile(p.proc, p.value);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          throw new Error(
            code === 'EROFS' || code === 'EACCES' || code === 'EPERM'
              ? `${p.proc} is not writable here (${code}: in a container the kernel keeps most parameters to the host); ${p.conf} is unchanged`
              : `the kernel refused ${p.value} for ${p.name} (${(err as Error).message}); ${p.conf} is unchanged`,
          );
        }
        const now = await readLive(p);
        if (now !== p.value)
          throw new Error(`the kernel took ${p.value} for ${p.name} but reads back ${now}; ${p.conf} is unchanged`);
      }
      if (conf) {
        if (!file.exists) await ensureParents(p.conf);
        await writeAtomic({
          path: p.conf,
          content: Buffer.from(conf.after, 'utf8'),
          mode: file.mode ?? NEW_FILE_MODE,
          ...(file.uid === undefined ? {} : { uid: file.uid }),
          ...(file.gid === undefined ? {} : { gid: file.gid }),
        });
      }
      return change.summary;
    },
  });
}
