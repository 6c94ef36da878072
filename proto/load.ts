// The grpc-js services of the .proto contracts, for the keeper's servers (hub/) and the tests' raw
// clients. The soul does not load grpc-js: `soul run` and `soul init` speak gRPC over node:http2
// with proto/codec.ts (docs/performance.md), which decodes as LOADER_OPTIONS does here.
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { LOADER_OPTIONS, protoRoot } from './contracts';

function load(file: string): grpc.GrpcObject {
  const root = protoRoot();
  const def = protoLoader.loadSync(path.join(root, file), { ...LOADER_OPTIONS, includeDirs: [root] });
  return grpc.loadPackageDefinition(def);
}

type ServiceCtor = grpc.ServiceClientConstructor;
let bootstrap: ServiceCtor | undefined;
let eventStream: ServiceCtor | undefined;

// One loader per service: a keeper that serves no bootstrap listener does not parse its .proto.

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
