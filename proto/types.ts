// The wire messages' TypeScript shapes as proto/load.ts decodes them (snake_case, oneof name in
// `msg`), under the names the rest of the code imports. They are generated from the .proto files by
// scripts/gen-proto.js into proto/generated/ (never written by hand); this file only names them.
// Wire types are not domain types: hub/ and agent/ convert at their edges.
export type {
  Cancel,
  CertificateRenewed,
  Facts,
  Goodbye,
  Heartbeat,
  Hello,
  RenewalRefused,
  RenewCertificate,
  SoulMessage,
  Soulprint,
  StepProgress,
  Welcome,
} from './generated/event-stream';
export type { EnrollRequest, EnrollResponse } from './generated/bootstrap';
import type * as stream from './generated/event-stream';

export type StepResultMsg = stream.StepResult;
export type StepRequestMsg = stream.StepRequest;
export type ModuleProgramMsg = stream.ModuleProgram;
export type FileIdentityMsg = stream.FileIdentity;
export type GoodbyeReason = stream.Goodbye['reason'];

/** What a keeper writes (no `msg` needed on send). */
export type KeeperMessage = stream.KeeperMessageToSend;
/** A decoded KeeperMessage as the soul receives it (the oneof name in `msg`). */
export type ReceivedKeeperMessage = stream.KeeperMessage;
/** What a soul writes (no `msg` needed on send). */
export type OutgoingSoulMessage = stream.SoulMessageToSend;
