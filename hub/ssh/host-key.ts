// Host keys for SSH souls: the pinned key an operator registers (`<type> <base64> [comment]`, the
// form of /etc/ssh/ssh_host_*_key.pub and of a known_hosts line without its host field), parsed by
// the SSH library itself so that what is accepted at registration is what the connection compares.
import { utils } from 'ssh2';

/** The key's wire form (what the server presents during key exchange), or an error text. */
export function parseHostKey(text: string): { blob: Buffer; type: string } | { error: string } {
  const parsed = utils.parseKey(text.trim());
  if (parsed instanceof Error) return { error: `not an OpenSSH public key (${parsed.message})` };
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key) return { error: 'no key in the text' };
  if (key.isPrivateKey()) return { error: "this is a private key: register the host's public key" };
  return { blob: key.getPublicSSH(), type: key.type };
}

/** `<type> <base64>`: the canonical text of a key seen on the wire (stored for trust on first use). */
export function hostKeyText(blob: Buffer): string {
  // The wire form starts with the key type as an SSH string: uint32 length, then the name.
  const len = blob.readUInt32BE(0);
  return `${blob.subarray(4, 4 + len).toString('latin1')} ${blob.toString('base64')}`;
}

/** Whether the presented key is the pinned one (both in wire form; public data, no timing concern). */
export function sameHostKey(pinned: Buffer, presented: Buffer): boolean {
  return pinned.equals(presented);
}
