// The protobuf codec under src/xds/proto: wire format edge cases and the proto3 JSON mapping
// (protobuf.dev "Encoding" and "ProtoJSON Format"), on a test message that uses every scalar kind.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decodeMessage,
  defineMessage,
  EnumType,
  encodeMessage,
  MAX_MESSAGE_DEPTH,
  type MessageType,
  messageFromJson,
  messageToJson,
  ProtoJsonError,
} from '../../src/xds/proto/codec.js';
import { Any, Duration, Struct, UInt64Value } from '../../src/xds/proto/messages.js';
import { WireError, WireWriter } from '../../src/xds/proto/wire.js';

const Color = new EnumType('lbtree.test.Color', { RED: 0, GREEN: 1, BLUE: 2 });

const Everything: MessageType = defineMessage('lbtree.test.Everything', () => [
  { name: 'd', number: 1, type: 'double' },
  { name: 'f', number: 2, type: 'float' },
  { name: 'i32', number: 3, type: 'int32' },
  { name: 'i64', number: 4, type: 'int64' },
  { name: 'u32', number: 5, type: 'uint32' },
  { name: 'u64', number: 6, type: 'uint64' },
  { name: 's32', number: 7, type: 'sint32' },
  { name: 's64', number: 8, type: 'sint64' },
  { name: 'fx32', number: 9, type: 'fixed32' },
  { name: 'fx64', number: 10, type: 'fixed64' },
  { name: 'sfx32', number: 11, type: 'sfixed32' },
  { name: 'sfx64', number: 12, type: 'sfixed64' },
  { name: 'b', number: 13, type: 'bool' },
  { name: 'str', number: 14, type: 'string' },
  { name: 'raw', number: 15, type: 'bytes' },
  { name: 'color', number: 16, type: Color },
  { name: 'nums', number: 17, type: 'uint32', repeated: true },
  { name: 'words', number: 18, type: 'string', repeated: true },
  { name: 'child', number: 19, type: () => Everything },
  { name: 'by_name', number: 20, type: 'int64', mapKey: 'string' },
  { name: 'pick_a', number: 21, type: 'string', oneof: 'pick' },
  { name: 'pick_b', number: 22, type: 'uint32', oneof: 'pick' },
  { name: 'max', number: 536_870_911, type: 'bool' },
]);

const FULL = {
  d: -1.25,
  f: 0.5,
  i32: -7,
  i64: -(2n ** 63n),
  u32: 0xffff_ffff,
  u64: 2n ** 64n - 1n,
  s32: -(2 ** 31),
  s64: 2n ** 63n - 1n,
  fx32: 0x8000_0001,
  fx64: 2n ** 64n - 2n,
  sfx32: -2,
  sfx64: -3n,
  b: true,
  str: 'héllo, wörld ✓',
  raw: new Uint8Array([0, 1, 254, 255]),
  color: 2,
  nums: [1, 300, 0xffff_ffff],
  words: ['a', '', 'c'],
  byName: { x: 5n, '': -1n },
  pickB: 0,
  max: true,
};

function roundTrip(value: Record<string, unknown>): Record<string, unknown> {
  return decodeMessage(Everything, encodeMessage(Everything, value));
}

describe('protobuf binary encoding ("Encoding": varints, zigzag, fixed, length-delimited, packed)', () => {
  test('every scalar kind survives encode → decode at its extremes', () => {
    const out = roundTrip(FULL as never);
    assert.equal(out.d, -1.25);
    assert.equal(out.f, 0.5);
    assert.equal(out.i32, -7);
    assert.equal(out.i64, -(2n ** 63n));
    assert.equal(out.u32, 0xffff_ffff);
    assert.equal(out.u64, 2n ** 64n - 1n);
    assert.equal(out.s32, -(2 ** 31));
    assert.equal(out.s64, 2n ** 63n - 1n);
    assert.equal(out.fx32, 0x8000_0001);
    assert.equal(out.fx64, 2n ** 64n - 2n);
    assert.equal(out.sfx32, -2);
    assert.equal(out.sfx64, -3n);
    assert.equal(out.b, true);
    assert.equal(out.str, 'héllo, wörld ✓');
    assert.deepEqual(out.raw, new Uint8Array([0, 1, 254, 255]));
    assert.equal(out.color, 2);
    assert.deepEqual(out.nums, [1, 300, 0xffff_ffff]);
    assert.deepEqual(out.words, ['a', '', 'c']);
    assert.deepEqual(out.byName, { x: 5n, '': -1n });
    assert.equal(out.pickB, 0, 'a oneof member set to its default is still present');
    assert.equal(out.pickA, undefined);
    assert.equal(out.max, true);
  });

  test('proto3 defaults: absent scalars decode as defaults, absent messages and oneofs as undefined', () => {
    const out = decodeMessage<Record<string, unknown>>(Everything, new Uint8Array(0));
    assert.equal(out.i64, 0n);
    assert.equal(out.str, '');
    assert.deepEqual(out.nums, []);
    assert.deepEqual(out.byName, {});
    assert.equal(out.child, undefined);
    assert.equal(out.pickA, undefined);
    assert.deepEqual(encodeMessage(Everything, { i32: 0, str: '', b: false }), new Uint8Array(0));
  });

  test('a negative int32 is written as a 10-byte varint, as the spec requires', () => {
    const bytes = encodeMessage(Everything, { i32: -1 });
    assert.deepEqual([...bytes], [0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  });

  test('repeated numbers are written packed and read packed or unpacked', () => {
    assert.deepEqual([...encodeMessage(Everything, { nums: [1, 2] })], [0x8a, 0x01, 0x02, 0x01, 0x02]);
    const w = new WireWriter();
    for (const n of [7, 8]) {
      w.tag(17, 0);
      w.varint32(n);
    }
    assert.deepEqual(decodeMessage<{ nums: number[] }>(Everything, w.finish()).nums, [7, 8]);
  });

  test('unknown fields of every wire type are skipped; a later oneof member replaces an earlier one', () => {
    const w = new WireWriter();
    w.tag(100, 0);
    w.varint32(5);
    w.tag(101, 1);
    w.fixed64(1n);
    w.tag(102, 2);
    w.string('skip me');
    w.tag(103, 5);
    w.fixed32(1);
    w.tag(21, 2);
    w.string('a');
    w.tag(22, 0);
    w.varint32(9);
    w.tag(14, 2);
    w.string('kept');
    const out = decodeMessage<Record<string, unknown>>(Everything, w.finish());
    assert.equal(out.str, 'kept');
    assert.equal(out.pickA, undefined);
    assert.equal(out.pickB, 9);
  });

  test('malformed input is a WireError naming the field path', () => {
    const nested = encodeMessage(Everything, { child: { child: { str: 'x' } } });
    assert.throws(
      () => decodeMessage(Everything, nested.subarray(0, nested.length - 1)),
      (e: Error) => e instanceof WireError && /runs past the end .* in Everything\.child/.test(e.message),
    );
    const w = new WireWriter();
    w.tag(14, 0); // a string field with a varint
    w.varint32(1);
    assert.throws(
      () => decodeMessage(Everything, w.finish()),
      /field str \(14\) has wire type 0, expected 2 in Everything\.str/,
    );
    assert.throws(
      () => decodeMessage(Everything, new Uint8Array([0x72, 0x02, 0xc3, 0x28])),
      /not valid UTF-8/,
    );
    assert.throws(() => decodeMessage(Everything, new Uint8Array([0x18, 0xff])), /truncated varint/);
    assert.throws(() => decodeMessage(Everything, new Uint8Array([0x00])), /field number 0/);
  });

  test(`messages nested deeper than ${MAX_MESSAGE_DEPTH} levels are rejected, not a stack overflow`, () => {
    let value: Record<string, unknown> = { str: 'leaf' };
    for (let i = 0; i < MAX_MESSAGE_DEPTH + 1; i++) value = { child: value };
    assert.throws(() => decodeMessage(Everything, encodeMessage(Everything, value)), /nesting exceeds 100/);
  });
});

describe('proto3 JSON mapping ("ProtoJSON Format")', () => {
  test('JSON names and proto names are both accepted; 64-bit integers as strings or numbers; enums by name or number', () => {
    const a = messageFromJson(Everything, { byName: { x: '5' }, u64: '18446744073709551615', color: 'BLUE' });
    const b = messageFromJson(Everything, {
      by_name: { x: 5 },
      u64: 18446744073709551615n as never,
      color: 2,
    });
    assert.deepEqual(a, b);
    assert.deepEqual(messageToJson(Everything, a), {
      u64: '18446744073709551615',
      color: 'BLUE',
      byName: { x: '5' },
    });
  });

  test('bytes are base64 (standard or URL-safe); floats accept "NaN" / "Infinity"; durations are "1.5s"', () => {
    const out = messageFromJson(Everything, { raw: 'AAH-_w==', d: 'NaN', f: '-Infinity' }) as Record<
      string,
      unknown
    >;
    assert.deepEqual(out.raw, new Uint8Array([0, 1, 254, 255]));
    assert.ok(Number.isNaN(out.d));
    assert.equal(out.f, Number.NEGATIVE_INFINITY);
    assert.deepEqual(messageToJson(Everything, out), { d: 'NaN', f: '-Infinity', raw: 'AAH+/w==' });
    assert.deepEqual(messageFromJson(Duration, '-1.000000500s'), { seconds: -1n, nanos: -500 });
    assert.equal(messageToJson(Duration, { seconds: 3n, nanos: 250_000_000 }), '3.25s');
  });

  test('Struct takes any JSON object, including a "__proto__" key, and round-trips through bytes', () => {
    const json = JSON.parse('{"a": [1, "x", false, null, {"b": {}}], "__proto__": {"c": 1}}');
    const bytes = encodeMessage(Struct, messageFromJson(Struct, json));
    const back = decodeMessage<Record<string, unknown>>(Struct, bytes);
    assert.deepEqual(back, json);
    assert.ok(Object.hasOwn(back, '__proto__'));
    assert.equal(Object.getPrototypeOf(back), Object.prototype);
  });

  test('wrappers are bare values; Any carries "@type" and the message fields', () => {
    assert.equal(messageFromJson(UInt64Value, '9'), 9n);
    const any = messageFromJson(Any, {
      '@type': 'type.googleapis.com/lbtree.test.Everything',
      str: 'in any',
    }) as {
      typeUrl: string;
      value: Uint8Array;
    };
    assert.equal(decodeMessage<{ str: string }>(Everything, any.value).str, 'in any');
    assert.deepEqual(messageToJson(Any, any), {
      '@type': 'type.googleapis.com/lbtree.test.Everything',
      str: 'in any',
    });
    // An Any of a well-known type carries its JSON in "value".
    const wrapped = messageFromJson(Any, {
      '@type': 'type.googleapis.com/google.protobuf.Duration',
      value: '2s',
    });
    assert.deepEqual(messageToJson(Any, wrapped), {
      '@type': 'type.googleapis.com/google.protobuf.Duration',
      value: '2s',
    });
    // A type lbtree does not describe can be given without fields (an empty message), not with them.
    const empty = messageFromJson(Any, { '@type': 'type.googleapis.com/other.Thing' }) as {
      value: Uint8Array;
    };
    assert.equal(empty.value.length, 0);
    assert.throws(
      () => messageFromJson(Any, { '@type': 'type.googleapis.com/other.Thing', x: 1 }),
      /does not describe other\.Thing/,
    );
    assert.throws(() => messageFromJson(Any, { x: 1 }), /\$\.@type: an Any needs "@type"/);
  });

  test('errors name the JSON path: unknown fields (unless ignored), wrong types, ranges, oneof conflicts', () => {
    const err = (json: unknown, path: string, problem: RegExp) =>
      assert.throws(
        () => messageFromJson(Everything, json),
        (e: Error) => e instanceof ProtoJsonError && e.path === path && problem.test(e.problem),
      );
    err({ child: { nope: 1 } }, '$.child.nope', /unknown field of lbtree\.test\.Everything/);
    assert.deepEqual(
      messageFromJson(Everything, { nope: 1 }, '$', { ignoreUnknownFields: true }),
      messageFromJson(Everything, {}),
    );
    err({ u32: -1 }, '$.u32', /out of range/);
    err({ i32: 1.5 }, '$.i32', /expected an integer/);
    err({ color: 'PURPLE' }, '$.color', /not a value of lbtree\.test\.Color/);
    err({ words: 'a' }, '$.words', /expected an array/);
    err({ words: ['a', 2] }, '$.words[1]', /expected a string/);
    err({ pickA: 'a', pick_b: 1 }, '$.pick_b', /only one field of oneof pick/);
    err({ str: 'a', str_: 1 }, '$.str_', /unknown field/);
    err({ byName: { 'a b': 'x' } }, '$.byName["a b"]', /expected an integer/);
    err({ raw: 'not base64!' }, '$.raw', /base64/);
    assert.throws(() => messageFromJson(Everything, { u32: 1, ...{ u_32: 2 } }), /unknown field/);
    assert.throws(
      () => messageFromJson(Everything, JSON.parse('{"byName": {}, "by_name": {}}')),
      /given twice/,
    );
  });
});
