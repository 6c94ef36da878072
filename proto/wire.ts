// The protocol buffers wire format for the few field kinds the soul's contracts use (EventStream,
// Bootstrap), driven by a table of fields per message (generated from the .proto files into
// proto/generated/ by scripts/gen-proto.js). It exists so that the soul does not load protobufjs and parse the
// .proto files at every start (30-40 ms of `soul run`'s start-up and its reflection objects in an
// idle soul's heap, docs/performance.md). It reads and writes what
// grpc-js's proto-loader does on the keeper with proto/contracts.ts' LOADER_OPTIONS: decoding fills
// every scalar's default, an unset message field is null, longs come as numbers, and a oneof's set
// member is named in `msg`; proto/wire.test.ts holds both directions to protobufjs itself.

export type FieldKind = 'string' | 'bool' | 'uint32' | 'uint64' | 'int64' | 'message' | 'strings' | 'messages';

export interface FieldSpec {
  /** The .proto field name (keepCase: snake_case). */
  name: string;
  no: number;
  kind: FieldKind;
  /** For kinds 'message' and 'messages' (repeated): the fields of the nested message. */
  fields?: MessageSpec;
}

export interface MessageSpec {
  /** Full name, for errors ("keeper.stream.v1.Hello"). */
  type: string;
  fields: FieldSpec[];
  /** A oneof over all the fields (SoulMessage, KeeperMessage): its name. */
  oneof?: string;
}

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

/** Encodes a plain object as the message `spec`; fields left out, null or undefined are not written. */
export function encodeMessage(spec: MessageSpec, value: Record<string, unknown>): Uint8Array {
  const out = new Out();
  writeFields(out, spec, value);
  return out.finish();
}

/** Decodes bytes as the message `spec`, as proto-loader's toObject with defaults and oneofs would. */
export function decodeMessage(spec: MessageSpec, bytes: Uint8Array): Record<string, unknown> {
  return readFields(new Cursor(bytes), bytes.length, spec);
}

function writeFields(out: Out, spec: MessageSpec, value: Record<string, unknown>): void {
  if (value === null || typeof value !== 'object') throw new TypeError(`${spec.type}: object expected`);
  for (const f of spec.fields) {
    const v = value[f.name];
    if (v === undefined || v === null) continue;
    switch (f.kind) {
      case 'string':
        writeBytes(out, f.no, Buffer.from(String(v), 'utf8'));
        break;
      case 'bool':
        writeTag(out, f.no, VARINT);
        out.push(v ? 1 : 0);
        break;
      case 'uint32':
        writeTag(out, f.no, VARINT);
        writeVarint(out, Number(v) >>> 0);
        break;
      // A negative int64 goes as its 64-bit two's complement: ten bytes, as protobuf has it.
      case 'uint64':
      case 'int64':
        writeTag(out, f.no, VARINT);
        writeVarint(out, BigInt.asUintN(64, toBigInt(spec, f, v)));
        break;
      case 'strings':
        if (!Array.isArray(v)) throw new TypeError(`${spec.type}.${f.name}: array expected`);
        for (const s of v) writeBytes(out, f.no, Buffer.from(String(s), 'utf8'));
        break;
      case 'message':
        if (typeof v !== 'object') throw new TypeError(`${spec.type}.${f.name}: object expected`);
        writeNested(out, f, v as Record<string, unknown>);
        break;
      case 'messages':
        if (!Array.isArray(v)) throw new TypeError(`${spec.type}.${f.name}: array expected`);
        for (const m of v) {
          if (m === null || typeof m !== 'object') throw new TypeError(`${spec.type}.${f.name}: object expected`);
          writeNested(out, f, m as Record<string, unknown>);
        }
        break;
    }
  }
}

function writeNested(out: Out, f: FieldSpec, v: Record<string, unknown>): void {
  const inner = new Out();
  writeFields(inner, f.fields!, v);
  const body = inner.finish();
  writeTag(out, f.no, LEN);
  writeVarint(out, body.length);
  out.bytes(body);
}

/** A 64-bit value from a number or a decimal string; fractions are cut toward zero, as Long does. */
function toBigInt(spec: MessageSpec, f: FieldSpec, v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.trunc(v));
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return BigInt(v.trim());
  throw new TypeError(`${spec.type}.${f.name}: integer expected`);
}

function writeTag(out: Out, no: number, wireType: number): void {
  writeVarint(out, no * 8 + wireType);
}

function writeVarint(out: Out, v: bigint | number): void {
  if (typeof v === 'number' && v >= 0 && v <= 0x7fffffff) {
    let n = v;
    while (n >= 0x80) {
      out.push((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    out.push(n);
    return;
  }
  let n = BigInt(v);
  while (n >= 0x80n) {
    out.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  out.push(Number(n));
}

function writeBytes(out: Out, no: number, bytes: Uint8Array): void {
  writeTag(out, no, LEN);
  writeVarint(out, bytes.length);
  out.bytes(bytes);
}

/** The bytes of a message being written: small values gathered byte by byte, large ones kept whole. */
class Out {
  private readonly parts: Uint8Array[] = [];
  private small: number[] = [];

  push(byte: number): void {
    this.small.push(byte);
  }

  bytes(b: Uint8Array): void {
    if (b.length < 64) {
      for (const x of b) this.small.push(x);
      return;
    }
    this.flush();
    this.parts.push(b);
  }

  finish(): Buffer {
    this.flush();
    return Buffer.concat(this.parts);
  }

  private flush(): void {
    if (this.small.length === 0) return;
    this.parts.push(Uint8Array.from(this.small));
    this.small = [];
  }
}

class Cursor {
  pos = 0;
  private readonly view: Buffer;
  constructor(readonly bytes: Uint8Array) {
    this.view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** A length-delimited string, read in place. */
  string(): string {
    const n = Number(this.varint());
    const start = this.pos;
    this.take(n);
    return this.view.toString('utf8', start, start + n);
  }

  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.bytes.length)
        throw new RangeError(`index out of range: ${this.pos} + 1 > ${this.bytes.length}`);
      const b = this.bytes[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return BigInt.asUintN(64, result);
    }
    throw new Error('invalid varint encoding');
  }

  take(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.bytes.length)
      throw new RangeError(`index out of range: ${this.pos} + ${n} > ${this.bytes.length}`);
    const s = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** Skips a field of a number this side does not know (a newer keeper's), as proto3 requires. */
  skip(wireType: number): void {
    switch (wireType) {
      case VARINT:
        this.varint();
        return;
      case I64:
        this.take(8);
        return;
      case LEN:
        this.take(Number(this.varint()));
        return;
      case I32:
        this.take(4);
        return;
      default:
        throw new Error(`invalid wire type ${wireType} at offset ${this.pos}`);
    }
  }
}

function defaults(spec: MessageSpec): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (spec.oneof !== undefined) return o; // a oneof's members get no defaults; only the set one appears
  for (const f of spec.fields) {
    switch (f.kind) {
      case 'string':
        o[f.name] = '';
        break;
      case 'bool':
        o[f.name] = false;
        break;
      case 'uint32':
      case 'uint64':
      case 'int64':
        o[f.name] = 0;
        break;
      case 'strings':
      case 'messages':
        o[f.name] = [];
        break;
      case 'message':
        o[f.name] = null;
        break;
    }
  }
  return o;
}

const EXPECTED_WIRE: Record<FieldKind, number> = {
  string: LEN,
  bool: VARINT,
  uint32: VARINT,
  uint64: VARINT,
  int64: VARINT,
  message: LEN,
  strings: LEN,
  messages: LEN,
};

function readFields(c: Cursor, end: number, spec: MessageSpec): Record<string, unknown> {
  const o = defaults(spec);
  while (c.pos < end) {
    const tag = Number(c.varint());
    const no = tag >>> 3;
    const wireType = tag & 7;
    const f = spec.fields.find((x) => x.no === no);
    if (f === undefined) {
      c.skip(wireType);
      continue;
    }
    if (wireType !== EXPECTED_WIRE[f.kind])
      throw new Error(`${spec.type}.${f.name}: wire type ${wireType}, expected ${EXPECTED_WIRE[f.kind]}`);
    switch (f.kind) {
      case 'string':
        o[f.name] = c.string();
        break;
      case 'strings':
        ((o[f.name] ??= []) as string[]).push(c.string());
        break;
      case 'bool':
        o[f.name] = c.varint() !== 0n;
        break;
      case 'uint32':
        o[f.name] = Number(BigInt.asUintN(32, c.varint()));
        break;
      case 'uint64':
        o[f.name] = Number(c.varint());
        break;
      case 'int64':
        o[f.name] = Number(BigInt.asIntN(64, c.varint()));
        break;
      case 'message': {
        const length = Number(c.varint());
        const stop = c.pos + length;
        if (stop > end) throw new RangeError(`index out of range: ${c.pos} + ${length} > ${end}`);
        o[f.name] = readFields(c, stop, f.fields!);
        break;
      }
      case 'messages': {
        const length = Number(c.varint());
        const stop = c.pos + length;
        if (stop > end) throw new RangeError(`index out of range: ${c.pos} + ${length} > ${end}`);
        ((o[f.name] ??= []) as unknown[]).push(readFields(c, stop, f.fields!));
        break;
      }
    }
    if (spec.oneof !== undefined) {
      // proto3: the last member seen of a oneof wins; the others are cleared.
      for (const other of spec.fields) if (other !== f) delete o[other.name];
      o[spec.oneof] = f.name;
    }
  }
  if (c.pos !== end)
    throw new RangeError(`index out of range: a field runs past the message's end (${c.pos} > ${end})`);
  return o;
}
