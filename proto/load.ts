// The one loader of the .proto contracts, shared by the keeper (hub/) and the soul (agent/), so both
// sides decode with the same options. Compiled code runs from dist/, so the .proto files are found by
// walking up to the repository (or installed package) root rather than relative to this file.
import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/**
 * keepCase: field names stay snake_case as in the .proto (docs/proto.md uses the same names);
 * longs as Number: every int64 here is a count or a unix-ms time, far below 2^53;
 * oneofs: the virtual field `msg` names which member of a oneof is set.
 */
export const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };

function protoRoot(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'proto', 'keeper'))) return path.join(dir, 'proto');
  }
  throw new Error(`cannot find the proto/ folder above ${__dirname}`);
}

function load(file: string): grpc.GrpcObject {
  const root = protoRoot();
  const def = protoLoader.loadSync(path.join(root, file), { ...LOADER_OPTIONS, includeDirs: [root] });
  return grpc.loadPackageDefinition(def);
}

type ServiceCtor = grpc.ServiceClientConstructor;
let bootstrap: ServiceCtor | undefined;
let eventStream: ServiceCtor | undefined;

// One loader per service: `soul run` needs only the event stream, `soul init` only the bootstrap, and
// each .proto parsed is start-up time of the soul (docs/performance.md).

/** The Bootstrap client class (`.service` is the definition for a server). */
export function bootstrapService(): ServiceCtor {
  bootstrap ??= (load('keeper/bootstrap/v1/bootstrap.proto') as any).keeper.bootstrap.v1.Bootstrap as ServiceCtor;
  return bootstrap;
}

/** The EventStream client class (`.service` is the definition for a server). */
export function eventStreamService(): ServiceCtor {
  eventStream ??= (load('keeper/stream/v1/event_stream.proto') as any).keeper.stream.v1.EventStream as ServiceCtor;
  return eventStream;
}
