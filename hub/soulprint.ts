// The facts a soul reports about itself, checked before the keeper keeps them. Every list and
// /ui page serves soulprints, and `where:` expressions read them, so each fact is bounded and
// validated here, at the one door they come in through (Hello and Facts on the event stream).
// The certificate's SID is authoritative: the soulprint must name it as its fqdn.
import net from 'node:net';
import type { Soulprint } from '../proto/types';

/** Bounds on each fact; a soulprint over them is refused whole, never truncated (a half fact misleads). */
export const SOULPRINT_LIMITS = {
  hostname: 253,
  text: 128,
  addresses: 256,
  cpuCount: 1 << 20,
  /** Over this, the message is refused before any field is read (a real soulprint is under 2 KiB). */
  encodedBytes: 16 * 1024,
} as const;

export type SoulprintVerdict = { ok: true; soulprint: Soulprint } | { ok: false; field: string; reason: string };

// A DNS name: labels of letters, digits and hyphens, not starting or ending with a hyphen (the
// underscore too: hosts named with one exist, and it cannot break a page or a log line).
const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*$/;
// Free text (OS name, release, architecture, version): printable characters only, no control,
// format or separator characters other than the plain space, so nothing can break a page or a log line.
const TEXT = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]*$/u;

const bad = (field: string, reason: string): SoulprintVerdict => ({ ok: false, field, reason });

function text(
  sp: Soulprint,
  field: 'os_family' | 'os_name' | 'os_release' | 'architecture' | 'soul_version',
): SoulprintVerdict | undefined {
  const v = sp[field];
  if (typeof v !== 'string') return bad(field, 'must be text');
  if (v.length > SOULPRINT_LIMITS.text)
    return bad(field, `must be at most ${SOULPRINT_LIMITS.text} characters (it has ${v.length})`);
  if (!TEXT.test(v)) return bad(field, 'must hold printable characters only (no control characters)');
  return undefined;
}

/** `sid` is the name in the soul's certificate. */
export function checkSoulprint(sp: Soulprint | null | undefined, sid: string): SoulprintVerdict {
  if (!sp) return bad('soulprint', 'is required');
  // Length of every string first: the cheap bound, before any regular expression runs on them.
  const strings = [
    sp.fqdn,
    sp.hostname,
    sp.os_family,
    sp.os_name,
    sp.os_release,
    sp.architecture,
    sp.soul_version,
    ...(Array.isArray(sp.addresses) ? sp.addresses : []),
  ];
  const size = strings.reduce((n, s) => n + (typeof s === 'string' ? s.length : 0), 0);
  if (size > SOULPRINT_LIMITS.encodedBytes)
    return bad('soulprint', `must be at most ${SOULPRINT_LIMITS.encodedBytes} bytes of text (it has ${size})`);
  if (sp.fqdn !== sid)
    return bad('fqdn', `names host "${String(sp.fqdn).slice(0, 253)}" but the certificate is for ${sid}`);
  if (typeof sp.hostname !== 'string' || !HOSTNAME.test(sp.hostname))
    return bad(
      'hostname',
      'must be a DNS name (letters, digits, hyphens, underscores and dots, at most 253 characters)',
    );
  for (const f of ['os_family', 'os_name', 'os_release', 'architecture', 'soul_version'] as const) {
    const v = text(sp, f);
    if (v) return v;
  }
  if (!Number.isSafeInteger(sp.cpu_count) || sp.cpu_count < 0 || sp.cpu_count > SOULPRINT_LIMITS.cpuCount)
    return bad('cpu_count', `must be an integer from 0 to ${SOULPRINT_LIMITS.cpuCount}`);
  if (!Number.isSafeInteger(sp.memory_bytes) || sp.memory_bytes < 0)
    return bad('memory_bytes', 'must be a non-negative integer');
  if (!Array.isArray(sp.addresses)) return bad('addresses', 'must be a list');
  if (sp.addresses.length > SOULPRINT_LIMITS.addresses)
    return bad(
      'addresses',
      `must list at most ${SOULPRINT_LIMITS.addresses} addresses (it has ${sp.addresses.length})`,
    );
  const i = sp.addresses.findIndex((a) => typeof a !== 'string' || net.isIP(a) === 0);
  if (i >= 0) return bad(`addresses[${i}]`, 'must be an IPv4 or IPv6 address');
  // Only the known fields are kept: the decoder's shape, copied, so nothing else rides along.
  return {
    ok: true,
    soulprint: {
      fqdn: sp.fqdn,
      hostname: sp.hostname,
      os_family: sp.os_family,
      os_name: sp.os_name,
      os_release: sp.os_release,
      architecture: sp.architecture,
      cpu_count: sp.cpu_count,
      memory_bytes: sp.memory_bytes,
      addresses: [...sp.addresses],
      soul_version: sp.soul_version,
    },
  };
}
