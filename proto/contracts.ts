// The .proto contracts: where they are, and how both sides read them. Compiled code runs from dist/,
// so the files are found by walking up to the repository (or installed package) root rather than
// relative to this file. The options are proto/load.ts' (the keeper's grpc-js services); the soul's own
// codec (proto/codec.ts) decodes as they do, which proto/wire.test.ts checks with these options.
import fs from 'node:fs';
import path from 'node:path';
import type { Options } from '@grpc/proto-loader';

/**
 * keepCase: field names stay snake_case as in the .proto (docs/proto.md uses the same names);
 * longs as Number: every int64 here is a count or a unix-ms time, far below 2^53;
 * oneofs: the virtual field `msg` names which member of a oneof is set.
 */
export const LOADER_OPTIONS: Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };

export function protoRoot(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'proto', 'keeper')))
      return path.join(dir, 'proto');
  }
  throw new Error(`cannot find the proto/ folder above ${__dirname}`);
}
