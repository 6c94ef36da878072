// The soul's stream codec (proto/wire.ts with the generated proto/generated/ tables) against protobufjs reading the
// contract itself, with the options grpc-js's proto-loader uses on the keeper: the field tables name
// the .proto's fields, numbers and kinds; every message the soul writes reads on the keeper's side as
// the soul meant it, and every message the keeper writes reads on the soul's side as proto-loader
// would have read it (defaults filled, longs as numbers, the oneof's member in `msg`).
import assert from 'node:assert/strict';
import path from 'node:path';
import protobuf from 'protobufjs';
import { EVENT_STREAM_CONNECT } from './codec';
import { LOADER_OPTIONS, protoRoot } from './contracts';
import { ENROLL_REQUEST, ENROLL_RESPONSE } from './bootstrap-fields';
import { KEEPER_MESSAGE, SOUL_MESSAGE } from './stream-fields';
import { decodeMessage, encodeMessage, type FieldSpec, type MessageSpec } from './wire';

function contract(): protobuf.Root {
  const root = new protobuf.Root();
  const dir = protoRoot();
  root.resolvePath = (_o, target) => (path.isAbsolute(target) ? target : path.join(dir, target));
  root.loadSync(['keeper/stream/v1/event_stream.proto', 'keeper/bootstrap/v1/bootstrap.proto'], { keepCase: true });
  root.resolveAll();
  return root;
}

const { longs, enums, defaults, oneofs } = LOADER_OPTIONS;
const TO_OBJECT = { longs, enums, defaults, oneofs } as protobuf.IConversionOptions;

/** The kind proto/wire.ts would give a protobufjs field, or what it is if wire.ts has none. */
function kindOf(f: protobuf.Field): string {
  if (f.resolvedType instanceof protobuf.Type) return f.repeated ? 'messages' : 'message';
  if (f.repeated) return f.type === 'string' ? 'strings' : `repeated ${f.type}`;
  return f.type;
}

function tableOf(t: protobuf.Type): unknown {
  return {
    type: t.fullName.replace(/^\./, ''),
    oneof:
      t.oneofsArray.length === 1 && t.oneofsArray[0]!.fieldsArray.length === t.fieldsArray.length
        ? t.oneofsArray[0]!.name
        : undefined,
    fields: t.fieldsArray.map((f) => ({
      name: f.name,
      no: f.id,
      kind: kindOf(f),
      fields: f.resolvedType instanceof protobuf.Type ? tableOf(f.resolvedType) : undefined,
    })),
  };
}

function ours(spec: MessageSpec): unknown {
  return {
    type: spec.type,
    oneof: spec.oneof,
    fields: spec.fields.map((f: FieldSpec) => ({
      name: f.name,
      no: f.no,
      kind: f.kind,
      fields: f.fields ? ours(f.fields) : undefined,
    })),
  };
}

/** A small deterministic generator, so that a failure names a seed that shows it again. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const STRINGS = [
  '',
  'a',
  'web-01.example.test',
  'ünïcødé ✓ 日本',
  '{"path":"/etc/x","mode":"0644"}',
  'x'.repeat(300),
  '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
];
const U32 = [0, 1, 127, 128, 300, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1];
const U64 = [0, 1, 127, 128, 2 ** 32, 2 ** 32 + 1, 1_764_000_000_000, Number.MAX_SAFE_INTEGER];
const I64 = [...U64, -1, -128, -1_764_000_000_000, Number.MIN_SAFE_INTEGER];

/** A random value for every field of `spec` (some left out), members of a oneof one at a time. */
function sample(spec: MessageSpec, r: () => number, member?: string): Record<string, unknown> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const o: Record<string, unknown> = {};
  for (const f of spec.fields) {
    if (spec.oneof !== undefined ? f.name !== member : r() < 0.2) continue;
    switch (f.kind) {
      case 'string':
        o[f.name] = pick(STRINGS);
        break;
      case 'strings':
        o[f.name] = Array.from({ length: Math.floor(r() * 4) }, () => pick(STRINGS));
        break;
      case 'bool':
        o[f.name] = r() < 0.5;
        break;
      case 'uint32':
        o[f.name] = pick(U32);
        break;
      case 'uint64':
        o[f.name] = pick(U64);
        break;
      case 'int64':
        o[f.name] = pick(I64);
        break;
      case 'message':
        o[f.name] = r() < 0.1 && spec.oneof === undefined ? null : sample(f.fields!, r);
        break;
      case 'messages':
        o[f.name] = Array.from({ length: Math.floor(r() * 4) }, () => sample(f.fields!, r));
        break;
    }
  }
  return o;
}

describe("the soul's stream codec (proto/wire.ts) against the contract and protobufjs", () => {
  const root = contract();
  const soul = root.lookupType('keeper.stream.v1.SoulMessage');
  const keeper = root.lookupType('keeper.stream.v1.KeeperMessage');
  const enrollRequest = root.lookupType('keeper.bootstrap.v1.EnrollRequest');
  const enrollResponse = root.lookupType('keeper.bootstrap.v1.EnrollResponse');
  const theirs = (t: protobuf.Type, m: Record<string, unknown>) => t.encode(t.fromObject(m)).finish();
  const read = (t: protobuf.Type, b: Uint8Array) => t.toObject(t.decode(b), TO_OBJECT);

  it('names every field of the .proto with its number and kind, and no other', () => {
    assert.deepEqual(ours(SOUL_MESSAGE), tableOf(soul));
    assert.deepEqual(ours(KEEPER_MESSAGE), tableOf(keeper));
    assert.deepEqual(ours(ENROLL_REQUEST), tableOf(enrollRequest));
    assert.deepEqual(ours(ENROLL_RESPONSE), tableOf(enrollResponse));
  });

  const all = [
    ['soul', SOUL_MESSAGE, soul],
    ['keeper', KEEPER_MESSAGE, keeper],
    ['enrol request', ENROLL_REQUEST, enrollRequest],
    ['enrol response', ENROLL_RESPONSE, enrollResponse],
  ] as const;
  for (const [side, spec, type] of all) {
    it(`reads and writes every ${side} message as protobufjs does (60 values of each kind)`, () => {
      const r = rng(spec.fields.length);
      for (const f of spec.oneof !== undefined ? spec.fields : [spec.fields[0]!]) {
        for (let i = 0; i < 60; i++) {
          const m = sample(spec, r, f.name);
          const what = `${f.name} #${i}: ${JSON.stringify(m).slice(0, 200)}`;
          const expected = read(type, theirs(type, m));
          assert.deepEqual(
            read(type, encodeMessage(spec, m)),
            expected,
            `written by wire.ts, read by protobufjs: ${what}`,
          );
          assert.deepEqual(
            decodeMessage(spec, theirs(type, m)),
            expected,
            `written by protobufjs, read by wire.ts: ${what}`,
          );
        }
      }
    });
  }

  it('decodes what the soul receives as the keeper meant it', () => {
    const codec = EVENT_STREAM_CONNECT;
    const bytes = theirs(keeper, {
      certificate_renewed: {
        certificate_pem: 'C',
        chain_pem: ['I1', 'I2'],
        serial: '0a',
        not_after_ms: 1_790_000_000_000,
      },
    });
    assert.deepEqual(codec.decode(bytes), {
      msg: 'certificate_renewed',
      certificate_renewed: {
        certificate_pem: 'C',
        chain_pem: ['I1', 'I2'],
        serial: '0a',
        not_after_ms: 1_790_000_000_000,
      },
    });
    assert.deepEqual(codec.decode(theirs(keeper, { welcome: {} })), {
      msg: 'welcome',
      welcome: { session_id: '', epoch: 0, heartbeat_interval_ms: 0, kid: '' },
    });
    assert.deepEqual(read(soul, codec.encode({ heartbeat: { seq: 2 ** 40 } })), {
      msg: 'heartbeat',
      heartbeat: { seq: 2 ** 40 },
    });
    // A step's output near the keeper's limit, and multi-byte text across it, arrive whole.
    const output = 'ü€ line of output\n'.repeat(12_000);
    const result = {
      request_id: 'r',
      apply_id: 'a',
      step_index: 1,
      changed: true,
      ok: true,
      output,
      started_at_ms: 1,
      finished_at_ms: 2,
      replayed: false,
      diff_json: '{}',
      // Repeated messages (the files a step read and wrote) arrive whole and in order.
      files: [
        {
          path: '/etc/a.conf',
          role: 'read' as const,
          digest: 'ab'.repeat(32),
          file_id: '2049:131:1700000000000000000',
        },
        {
          path: '/etc/a.conf',
          role: 'written' as const,
          digest: 'cd'.repeat(32),
          file_id: '2049:132:1700000000000000001',
        },
      ],
    };
    assert.deepEqual(read(soul, codec.encode({ step_result: result })), { msg: 'step_result', step_result: result });
    assert.deepEqual(decodeMessage(SOUL_MESSAGE, theirs(soul, { step_result: result })), {
      msg: 'step_result',
      step_result: result,
    });
  });

  it('skips the fields a newer keeper adds, and the last member of a oneof wins', () => {
    const goodbye = theirs(keeper, { goodbye: { reason: 'shutdown' } });
    // Field 15 (a string) and field 14 (a fixed64) inside Goodbye, unknown to this soul.
    const extra = Uint8Array.from([...goodbye.subarray(2), 0x7a, 2, 0x68, 0x69, 0x71, 1, 2, 3, 4, 5, 6, 7, 8]);
    const withExtra = Uint8Array.from([0x22, extra.length, ...extra]);
    assert.deepEqual(decodeMessage(KEEPER_MESSAGE, withExtra), { msg: 'goodbye', goodbye: { reason: 'shutdown' } });
    assert.deepEqual(read(keeper, withExtra), { msg: 'goodbye', goodbye: { reason: 'shutdown' } });
    // protobufjs keeps both members (and names the later one in `msg`); proto3 says the later one
    // replaces the other, which is what the soul acts on either way.
    const both = Uint8Array.from([...theirs(keeper, { cancel: { request_id: 'r' } }), ...goodbye]);
    assert.deepEqual(decodeMessage(KEEPER_MESSAGE, both), { msg: 'goodbye', goodbye: { reason: 'shutdown' } });
    assert.equal(read(keeper, both).msg, 'goodbye');
  });

  it('refuses a cut message or a field of the wrong wire type rather than guessing', () => {
    const bytes = theirs(keeper, { step_request: { request_id: 'r-1', params_json: '{"a":1}' } });
    for (let n = 1; n < bytes.length; n++)
      assert.throws(
        () => decodeMessage(KEEPER_MESSAGE, bytes.subarray(0, n)),
        /index out of range|past the message/,
        `cut at ${n}`,
      );
    assert.throws(
      () => decodeMessage(KEEPER_MESSAGE, Uint8Array.from([0x0a, 2, 0x08, 1])),
      /Welcome.session_id: wire type 0, expected 2/,
    );
    assert.throws(
      () => encodeMessage(SOUL_MESSAGE, { hello: { soulprint: { addresses: 'not a list' } } }),
      /Soulprint.addresses: array expected/,
    );
    assert.throws(() => encodeMessage(SOUL_MESSAGE, { heartbeat: { seq: 'many' } }), /Heartbeat.seq: integer expected/);
  });
});
