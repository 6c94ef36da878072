// The folders core.file.absent and core.dir.absent never remove: the root, the system's top folders
// and what the system and the soul are made of. One list, read by both sides of the contract: the
// soul refuses the removal when it parses the step (agent/state/paths-state.ts), and soul-lint warns
// of a removal it can see before any run (SL027, scenario/check/module-use.ts). Two copies had
// drifted apart (the lint missed /usr/share, /etc/systemd and others the soul refused); add here.
// Paths are canonical: absolute, no trailing slash. The soul also refuses its own configured paths,
// which are known only on the host.
export const PROTECTED_FOLDERS: ReadonlySet<string> = new Set([
  '/',
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/home',
  '/lib',
  '/lib32',
  '/lib64',
  '/media',
  '/mnt',
  '/opt',
  '/proc',
  '/root',
  '/run',
  '/sbin',
  '/srv',
  '/sys',
  '/tmp',
  '/usr',
  '/var',
  '/usr/bin',
  '/usr/lib',
  '/usr/local',
  '/usr/sbin',
  '/usr/share',
  '/var/lib',
  '/var/log',
  '/etc/systemd',
  '/etc/soul',
  '/var/lib/soul',
]);
